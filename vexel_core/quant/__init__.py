"""Tensor formats: the `QuantFormat` contract and the `WeightTensor` it produces."""

from vexel_core.quant.base import QuantFormat, WeightTensor

__all__ = ["QuantFormat", "WeightTensor"]
