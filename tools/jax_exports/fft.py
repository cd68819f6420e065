"""FFTs (issue 31), exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU, x64 enabled).

`jnp.fft.fft`, `ifft`, `rfft`, `irfft`, `fft2` and `rfftn` on c64/c128 (f32/f64 for the real
transforms), at lengths that are powers of two and not (8, 12, 100), batched and not. Each
becomes one HLO `fft` (FFT, IFFT, RFFT, IRFFT) over the last one or two dimensions.

Writes, per case, into testdata/fft/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format (complex arrays
                       interleave real and imaginary parts)

Run: `python3 tools/jax_exports/fft.py` from the repository root (deterministic seeds).
"""
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "fft")


def cplx(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)
    for cdt, rdt, suffix in ((np.complex64, np.float32, "c64"), (np.complex128, np.float64, "c128")):
        write_case(OUT, f"fft_8_{suffix}", jnp.fft.fft, cplx(rng, (8,), cdt))
        write_case(OUT, f"fft_batch_12_{suffix}", jnp.fft.fft, cplx(rng, (3, 12), cdt))
        write_case(OUT, f"ifft_100_{suffix}", jnp.fft.ifft, cplx(rng, (2, 100), cdt))
        write_case(OUT, f"rfft_12_{suffix}", jnp.fft.rfft, rng.standard_normal((4, 12)).astype(rdt))
        write_case(OUT, f"irfft_100_{suffix}", lambda x: jnp.fft.irfft(x, n=100),
                   cplx(rng, (2, 51), cdt))
        write_case(OUT, f"irfft_odd_{suffix}", lambda x: jnp.fft.irfft(x, n=9),
                   cplx(rng, (3, 5), cdt))
        write_case(OUT, f"fft2_{suffix}", jnp.fft.fft2, cplx(rng, (2, 8, 12), cdt))
        write_case(OUT, f"rfftn_{suffix}", jnp.fft.rfftn, rng.standard_normal((6, 8)).astype(rdt))


if __name__ == "__main__":
    main()
