"""PyTorch's ScalarType names of the reference's dtypes, as its messages print them
("... not implemented for 'Long'", "Expected ... Got Double")."""

from __future__ import annotations

SCALAR_TYPE_NAMES = {
    "float64": "Double",
    "float32": "Float",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "complex128": "ComplexDouble",
    "complex64": "ComplexFloat",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def scalar_type_name(dtype) -> str:
    """``'Long'`` for int64, ``'Double'`` for float64, ...; an unknown dtype by its own name."""
    name = getattr(dtype, "name", None) or str(dtype)
    return SCALAR_TYPE_NAMES.get(name, name)
