; BA201 shell-stdin-write (shell scripts): text piped or redirected into a shell's stdin.

; echo "$x" | bash ; printf '%s\n' "$x" | sh
(pipeline
  (command) @arg
  .
  (command
    name: (command_name (word) @_sh)) @sink.stdin-oneshot
  (#match? @_sh "^((/usr)?/bin/)?(bash|sh|zsh|dash|ksh|ash)$")) @span

; bash <<< "$x" ; bash <<EOF ... EOF
(redirected_statement
  body: (command
    name: (command_name (word) @_sh)) @sink.stdin-oneshot @arg
  redirect: [(herestring_redirect) (heredoc_redirect)]
  (#match? @_sh "^((/usr)?/bin/)?(bash|sh|zsh|dash|ksh|ash)$")) @span

; bash <<< "$x" (the here-string belongs to the command itself)
((command
   name: (command_name (word) @_sh)
   redirect: (herestring_redirect)) @span @sink.stdin-oneshot @arg
  (#match? @_sh "^((/usr)?/bin/)?(bash|sh|zsh|dash|ksh|ash)$"))
