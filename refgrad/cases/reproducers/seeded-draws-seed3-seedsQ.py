"""What `refgrad run --ops <family> --draws seeded --seed 3 --known builtin` (seedsQ) reached that no
earlier entry described, or that an entry described in other words; each line prints what the
framework does beside what the mathematics gives.

tf.experimental.numpy.take_along_axis with an empty index whose gathered axis is empty, of an array
with an empty dim (tf-take-along-axis-empty-index-with-an-empty-dim): the result is the empty (0, 0)
array (np.take_along_axis and torch.gather return it); TensorFlow's GatherV2 raises, in eager mode
about params.shape[0] and under tf.vectorized_map, whose GatherV2 carries the batch as its first dim,
about params.shape[1]."""

import re

import numpy as np
import tensorflow as tf
import torch


def raised(f):
    try:
        return f"shape {tuple(f().shape)}"
    except tf.errors.InvalidArgumentError as e:
        said = re.search(r"params\.shape\[\d+\]: \d+ should be equal to indices\.shape\[\d+\]: \d+", e.message)
        return f"raises InvalidArgumentError '{said.group(0) if said else e.message[-200:]}'"


x = np.zeros((3, 0))
index = np.zeros((0, 0), np.int64)
take = tf.experimental.numpy.take_along_axis
print(f"exact (torch.gather) shape {tuple(torch.gather(torch.tensor(x), 0, torch.tensor(index)).shape)}")
print(f"tf take_along_axis eager: {raised(lambda: take(tf.constant(x), index, axis=0))}")
print(
    "tf take_along_axis under tf.vectorized_map over 3 samples: "
    f"{raised(lambda: tf.vectorized_map(lambda v: take(v, index, axis=0), tf.zeros((3, 3, 0), tf.float64)))}"
)
