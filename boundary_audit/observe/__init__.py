"""Observe a harness's boundary from its behaviour: no source, no adapter (issue 16).

A harness is run in the sandbox like any reply, under strace, with canary replies from a
pluggable reply source; the trace shows every process from the harness to the canary's own
execve, and that chain is the boundary:

    replies.ReplySource --canaries--> record.Recorder (bwrap + strace + seal) --trace-->
        strace.read_trace --> tree.build_tree --> chain.trace_chain --> classify.classify
        --> classify.to_path: an adapters.model.BoundaryPath, compared with `classify.compare`

- `record`: the harness runs sealed under the default seccomp filter; only strace (an
  exec-only, so non-dumpable, copy) and the run's reaper may use ptrace;
- `seal`: the in-sandbox program that stacks the default filter before the harness runs;
- `strace`: a bounded reader of `strace -f -yy -xx` output (hostile input);
- `tree`: processes, exec images with their stdin, every write with its channel;
- `chain`: the canary's hops, harness first, each with how the token reached it;
- `shells`: which programs are shells and what their argv asks (`-c`, `-lc`, `-i`, `-s`);
- `classify`: the taxonomy from the chain, the adapters' path model, field comparison;
- `canary`: marker tokens, arrival canaries, probes carried by markers, their records;
- `replies`: reply sources (env, file, stdin; the mock server plugs in here);
- `remote`: the test sshd for a harness's ssh hop, its remote side traced too;
- `run`: `observe` and `fingerprint`, the whole observation.

docs/observe.md is the user-facing description.
"""

from boundary_audit.observe.canary import Canary, arrival_canaries
from boundary_audit.observe.chain import Chain, Hop, trace_chain
from boundary_audit.observe.classify import Derived, Difference, classify, compare, to_path
from boundary_audit.observe.record import Recorder, TracedRun
from boundary_audit.observe.replies import (
    Delivery,
    EnvReplies,
    FileReplies,
    ReplySource,
    StdinReplies,
)
from boundary_audit.observe.run import Observation, fingerprint, observe

__all__ = [
    "Canary",
    "Chain",
    "Delivery",
    "Derived",
    "Difference",
    "EnvReplies",
    "FileReplies",
    "Hop",
    "Observation",
    "Recorder",
    "ReplySource",
    "StdinReplies",
    "TracedRun",
    "arrival_canaries",
    "classify",
    "compare",
    "fingerprint",
    "observe",
    "to_path",
    "trace_chain",
]
