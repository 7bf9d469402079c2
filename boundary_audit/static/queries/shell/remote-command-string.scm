; BA401 remote-command-string (shell scripts): `ssh host "$x"`, `docker exec c sh -c "$x"`,
; `kubectl exec pod -- sh -c "$x"` (the argv is classified).
((command
   name: (command_name (word) @_prog)) @span @sink.argv
  (#match? @_prog "^((/usr)?/bin/)?(ssh|docker|podman|kubectl)$"))
