; BA901 suppression-without-reason (shell scripts): comments holding an inline suppression.
((comment) @span
  (#match? @span "boundary-audit:"))
