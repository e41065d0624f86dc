"""tf.pad(mode='REFLECT') rejects a tensor with an empty dimension even where that dimension's
padding is 0; torch.nn.functional.pad(..., mode='reflect') pads the other dimensions."""
import tensorflow as tf

try:
    print("shape", tf.pad(tf.zeros((0, 2, 3)), [[0, 0], [0, 0], [1, 1]], mode="REFLECT").shape)
except tf.errors.InvalidArgumentError as exc:
    print("raises", type(exc).__name__, exc.message)
