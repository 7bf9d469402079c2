; BA201 shell-stdin-write (Python): text written into a process's stdin.

; proc.stdin.write(x) / self.proc.stdin.write(x) / self._stdin.write(x) / proc.stdin.writelines(x)
(call
  function: (attribute
    object: (attribute
      attribute: (identifier) @_stdin) @sink.stdin
    attribute: (identifier) @_write)
  arguments: (argument_list . (_) @arg)
  (#match? @_stdin "^_*(stdin|shell_stdin|proc_stdin)$")
  (#any-of? @_write "write" "writelines")) @span

; proc.communicate(input=x)
(call
  function: (attribute
    object: (_) @sink.stdin-oneshot
    attribute: (identifier) @_comm)
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @_kw
      value: (_) @arg))
  (#eq? @_comm "communicate")
  (#eq? @_kw "input")) @span

; proc.communicate(x)
(call
  function: (attribute
    object: (_) @sink.stdin-oneshot
    attribute: (identifier) @_comm)
  arguments: (argument_list . [(string) (identifier) (call) (attribute) (binary_operator)] @arg)
  (#eq? @_comm "communicate")) @span

; subprocess.run(["bash"], input=x)
((call
  function: (_) @_fn
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @_kw
      value: (_) @arg))) @span @sink.stdin-oneshot
  (#match? @_fn "(^|\\.)(run|check_output|call|check_call)$")
  (#eq? @_kw "input"))
