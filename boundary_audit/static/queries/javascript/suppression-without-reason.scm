; BA901 suppression-without-reason (JavaScript/TypeScript): comments holding a suppression.
((comment) @span
  (#match? @span "boundary-audit:"))
