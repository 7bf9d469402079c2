; BA201 shell-stdin-write (Go): text fed to a command's stdin.

; cmd.Stdin = strings.NewReader(x)
(assignment_statement
  left: (expression_list
    (selector_expression
      operand: (_) @sink.stdin-oneshot
      field: (field_identifier) @_f))
  right: (expression_list . (_) @arg)
  (#eq? @_f "Stdin")) @span

; stdin.Write([]byte(x)) / stdin.WriteString(x) on a StdinPipe
(call_expression
  function: (selector_expression
    operand: (_) @sink.stdin-handle
    field: (field_identifier) @_f)
  arguments: (argument_list . (_) @arg)
  (#any-of? @_f "Write" "WriteString")) @span

; io.WriteString(stdin, x) / fmt.Fprintln(stdin, x) / fmt.Fprint(stdin, x)
(call_expression
  function: (selector_expression
    operand: (identifier) @_pkg
    field: (field_identifier) @_f)
  arguments: (argument_list . (_) @sink.stdin-handle . (_) @arg)
  (#any-of? @_pkg "io" "fmt")
  (#any-of? @_f "WriteString" "Fprintln" "Fprint")) @span
