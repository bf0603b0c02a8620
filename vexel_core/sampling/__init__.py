"""Sampling: turning a batch of logits into next tokens.

`SamplingParams` (validated request knobs) and `SequenceHistory` (tokens seen, random stream)
per sequence; `LogitsProcessor` steps registered as sampler plugins; `Sampler` runs them.
"""

from vexel_core.sampling.params import MAX_LOGPROBS, SamplingParams, SequenceHistory
from vexel_core.sampling.processors import PROCESSORS, LogitsProcessor, SamplingRows
from vexel_core.sampling.sampler import Sampler, SampleResult

__all__ = [
    "MAX_LOGPROBS",
    "PROCESSORS",
    "LogitsProcessor",
    "SampleResult",
    "Sampler",
    "SamplingParams",
    "SamplingRows",
    "SequenceHistory",
]
