; BA301 argv-spawn (Go): exec.Command(name, args...) and exec.CommandContext(ctx, name, args...).
(call_expression
  function: (selector_expression
    field: (field_identifier) @_f) @sink.process
  arguments: (argument_list) @arg
  (#any-of? @_f "Command" "CommandContext")) @span
