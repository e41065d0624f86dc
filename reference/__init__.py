"""refgrad's reference: an independent, readable implementation of autodiff semantics.

``reference.conv`` holds array-level convolution (forward, backward, double backward and the
alternative algorithms frameworks dispatch to). ``reference.backend`` picks NumPy or CuPy.
"""

from reference import backend

__all__ = ["backend"]
