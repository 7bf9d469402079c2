; BA302 script-file-exec (Python): writes of a value into a file.

; f.write(code) / Path(p).write_text(code) / p.write_bytes(code)
(call
  function: (attribute
    object: (_) @sink.handle
    attribute: (identifier) @_m)
  arguments: (argument_list . (_) @arg)
  (#any-of? @_m "write" "write_text" "write_bytes" "writelines")) @span

; tar.addfile(TarInfo(name=p), io.BytesIO(code)): a member of a tar archive that is then
; unpacked where it runs (docker `put_archive`, a sandbox upload); the member's name is the file
(call
  function: (attribute attribute: (identifier) @_m)
  arguments: (argument_list . (_) @sink.file . [
    (keyword_argument name: (identifier) @_k value: (_) @arg)
    (_) @arg
  ])
  (#eq? @_m "addfile")) @span
