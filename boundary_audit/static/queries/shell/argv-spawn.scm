; BA301 argv-spawn (shell scripts): a command whose name is an unquoted expansion: `$cmd args`
; word-splits the value into argv, with no second parse of operators or quotes.
((command
   name: (command_name [(simple_expansion) (expansion)])) @span @sink.argv)
