"""`rng-bit-generator` as JAX uses it (issue 31), exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU).

`lax.rng_bit_generator` with both algorithms and the default, over shapes that exercise XLA's
half-shape split (an even dimension, only odd ones, a scalar) and every output width (u8, u16,
u32, u64), and `jax.random` with the `rbg` and `unsafe_rbg` PRNG implementations (their bits come
from `rng-bit-generator`). XLA:CPU and XLA:GPU both expand the op with XLA's own ThreeFry and
Philox (Philox for the default), so XLA:CPU's bits are XLA:GPU's.

Writes, per case, into testdata/rng/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format

Run: `python3 tools/jax_exports/rng.py` from the repository root (deterministic inputs).
"""
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "rng")


def main():
    os.makedirs(OUT, exist_ok=True)
    key = np.array([0xDEADBEEF, 0x12345678, 0xFFFFFFF0, 0xFFFFFFFF], dtype=np.uint32)
    algs = {"three_fry": lax.RandomAlgorithm.RNG_THREE_FRY, "philox": lax.RandomAlgorithm.RNG_PHILOX,
            "default": lax.RandomAlgorithm.RNG_DEFAULT}
    for aname, alg in algs.items():
        def shapes(k, alg=alg):
            outs = []
            for shape, dt in (((3, 4), jnp.uint32), ((5, 3), jnp.uint32), ((), jnp.uint32), ((7,), jnp.uint64),
                              ((2, 3, 5), jnp.uint8), ((9,), jnp.uint16)):
                k, bits = lax.rng_bit_generator(k, shape, dtype=dt, algorithm=alg)
                outs += [k, bits]
            return outs
        write_case(OUT, f"rng_bit_generator_{aname}", shapes, key)
    for impl in ("rbg", "unsafe_rbg"):
        def sample(k, impl=impl):
            key = jax.random.wrap_key_data(k, impl=impl)
            k1, k2 = jax.random.split(key)
            return (jax.random.uniform(k1, (4, 6), jnp.float32), jax.random.bits(k2, (10,), jnp.uint32),
                    jax.random.randint(k2, (8,), 0, 100).astype(jnp.uint32))
        data = jax.random.key_data(jax.random.key(31, impl=impl)).astype(np.uint32)
        write_case(OUT, f"jax_random_{impl}", sample, data)


if __name__ == "__main__":
    main()
