"""Samples of the distance primitives (:mod:`reference.ops.rules.distance`)."""

import math

import reference as T

F = T.nn.functional

RECORDS = {
    "pnorm": [
        ("p2_pairwise", lambda a, b: F.pairwise_distance(a, b), [(3, 4), (3, 4)], "aa"),
        ("p1_far", lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True), [(3, 4), (4,)], "ff"),
        ("p3", lambda a, b: F.pairwise_distance(a, b, p=3.0), [(2, 4), (2, 4)], "aa"),
        ("p_half", lambda a: F.normalize(a, p=0.5, dim=0), [(3, 2)], "f"),
        ("p1_5", lambda a: F.normalize(a, p=1.5, dim=1), [(3, 2)], "f"),
        ("inf", lambda a, b: F.pairwise_distance(a, b, p=math.inf), [(3, 4), (3, 4)], "ff"),
        ("cosine", lambda a, b: F.cosine_similarity(a, b, dim=-1), [(3, 4), (3, 4)], "aa"),
    ],
    "cdist": [
        ("p2", lambda a, b: T.cdist(a, b), [(3, 4), (2, 4)], "aa"),
        ("p1_batched", lambda a, b: T.cdist(a, b, p=1.0), [(2, 3, 2), (2, 2, 2)], "ff"),
        ("p3", lambda a, b: T.cdist(a, b, p=3.0), [(3, 2), (2, 2)], "aa"),
        ("p1_5", lambda a, b: T.cdist(a, b, p=1.5), [(3, 2), (2, 2)], "aa"),
        ("p_half", lambda a, b: T.cdist(a, b, p=0.5), [(3, 2), (2, 2)], "ff"),
        ("inf", lambda a, b: T.cdist(a, b, p=math.inf), [(3, 2), (2, 2)], "ff"),
        ("pdist", lambda a: F.pdist(a), [(4, 3)], "a"),
    ],
}
