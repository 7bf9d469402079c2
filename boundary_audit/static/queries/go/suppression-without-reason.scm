; BA901 suppression-without-reason (Go): comments holding an inline suppression.
((comment) @span
  (#match? @span "boundary-audit:"))
