"""Every tensor format shipped with Vexel, registered by `vexel_core.builtins`.

Each is keyed by its GGML type name (``"Q4_K"``): ``host.quant_formats.get("Q4_K")``.
"""

from __future__ import annotations

from vexel_core.quant.base import QuantFormat
from vexel_core.quant.floats import BF16, F16, F32
from vexel_core.quant.kquants import Q2_K, Q3_K, Q4_K, Q5_K, Q6_K
from vexel_core.quant.legacy import Q4_0, Q4_1, Q5_0, Q5_1, Q8_0

ALL_FORMATS: list[QuantFormat] = [
    F32(), F16(), BF16(),
    Q8_0(), Q4_0(), Q4_1(), Q5_0(), Q5_1(),
    Q2_K(), Q3_K(), Q4_K(), Q5_K(), Q6_K(),
]
