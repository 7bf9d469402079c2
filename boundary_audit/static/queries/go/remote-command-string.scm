; BA401 remote-command-string (Go): commands run by a remote shell.

; golang.org/x/crypto/ssh: session.Run(cmd), session.Output(cmd), session.CombinedOutput(cmd)
(call_expression
  function: (selector_expression
    operand: (_) @_recv
    field: (field_identifier) @_f) @sink.remote
  arguments: (argument_list . (_) @arg .)
  (#any-of? @_f "Run" "Output" "CombinedOutput" "Start")
  (#match? @_recv "([Ss]ession|[Ss]ess|ssh[A-Za-z]*)$")) @span

; Docker SDK: container.ExecOptions{Cmd: []string{...}}
((composite_literal
   type: (_) @_t
   body: (literal_value
     (keyed_element
       key: (literal_element (identifier) @_k)
       value: (literal_element (_) @arg)))) @span @sink.remote-argv
  (#match? @_t "Exec(Options|Config)$")
  (#eq? @_k "Cmd"))
