; BA101 shell-string-sink (Rust): argv literals whose head is a shell with -c.
; Command::new("bash").arg("-c").arg(x).output() is found by argv-spawn and classified here.

; vec!["bash", "-c", cmd]
((macro_invocation
   macro: (identifier) @_m
   (token_tree
     .
     (string_literal) @_sh
     .
     (string_literal) @_flag)) @span @sink.argv
  (#eq? @_m "vec")
  (#match? @_sh "^\"(/usr)?(/local)?(/bin/)?(ba|z|da|k|a)?sh\"$")
  (#match? @_flag "^\"-[a-zA-Z]*c[a-zA-Z]*\"$"))

; ["bash", "-c", cmd]
((array_expression
   .
   (string_literal) @_sh
   .
   (string_literal) @_flag
   .
   (_) @arg) @span @sink.argv
  (#match? @_sh "^\"(/usr)?(/local)?(/bin/)?(ba|z|da|k|a)?sh\"$")
  (#match? @_flag "^\"-[a-zA-Z]*c[a-zA-Z]*\"$"))
