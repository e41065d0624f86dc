"""Samples of the FFT primitives (reference.ops.rules.fft), through torch.fft's functions."""

import reference as T

RECORDS = {
    "fft_c2c": [
        ("fft", lambda z: T.fft.fft(z), [(2, 4)], "c"),
        ("ifft2_ortho", lambda z: T.fft.ifft2(z, norm="ortho"), [(3, 4)], "c"),
        ("fft_of_real_padded", lambda x: T.fft.fft(x, n=5, dim=0, norm="forward"), [(3, 2)], "a"),
    ],
    "fft_r2c": [
        ("rfft", lambda x: T.fft.rfft(x), [(2, 5)], "a"),
        ("rfftn_forward", lambda x: T.fft.rfftn(x, norm="forward"), [(3, 4)], "a"),
        ("ihfft", lambda x: T.fft.ihfft(x), [(6,)], "a"),
    ],
    "fft_c2r": [
        ("irfft", lambda z: T.fft.irfft(z), [(2, 4)], "c"),
        ("irfft_odd_ortho", lambda z: T.fft.irfft(z, n=7, norm="ortho"), [(4,)], "c"),
        ("irfft2", lambda z: T.fft.irfft2(z, s=(3, 6)), [(3, 4)], "c"),
        ("hfft", lambda z: T.fft.hfft(z, n=5), [(3,)], "c"),
    ],
}
