#!/usr/bin/env python3
# Writes a second HRTF data set for the fidelity tests: Debian's MIT KEMAR SOFA file resampled to another
# rate and with its grid turned by a given azimuth, as a SOFA (HDF5) file that libmysofa reads.
#
#   make-test-sofa.py SOURCE.sofa OUTPUT.sofa [RATE] [AZIMUTH_OFFSET]
#
# The file is copied and its datasets are overwritten in place (same shapes), so its netCDF-4/HDF5
# structure stays the one libmysofa reads: Data.IR is resampled (FFT band-limited, zero-padded to the
# same N, scaled by the rate ratio so the filters' gain stays), Data.SamplingRate set, and each
# SourcePosition azimuth moved by the offset. Needs Debian's python3-h5py (scripts/setup.sh).
import shutil
import sys

import h5py
import numpy as np


def main() -> None:
    source, output = sys.argv[1], sys.argv[2]
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else 32000.0
    offset = float(sys.argv[4]) if len(sys.argv) > 4 else 2.5
    shutil.copyfile(source, output)
    with h5py.File(output, "r+") as f:
        ir = f["Data.IR"][...].astype(np.float64)
        old = float(f["Data.SamplingRate"][0])
        m, r, n = ir.shape
        size = 1 << int(np.ceil(np.log2(4 * n)))
        spectrum = np.fft.rfft(ir, n=size, axis=2)
        new_size = int(round(size * rate / old))
        keep = min(spectrum.shape[2], new_size // 2 + 1)
        resized = np.zeros((m, r, new_size // 2 + 1), dtype=complex)
        resized[:, :, :keep] = spectrum[:, :, :keep]
        if rate < old:
            # The new Nyquist bin of a real signal: keep its real part only.
            resized[:, :, -1] = resized[:, :, -1].real
        out = np.fft.irfft(resized, n=new_size, axis=2) * (new_size / size) * (old / rate)
        length = min(n, out.shape[2])
        data = np.zeros_like(ir)
        data[:, :, :length] = out[:, :, :length]
        f["Data.IR"][...] = data.astype(f["Data.IR"].dtype)
        f["Data.SamplingRate"][...] = rate
        positions = f["SourcePosition"][...]
        positions[:, 0] = np.mod(positions[:, 0] + offset, 360.0)
        f["SourcePosition"][...] = positions


if __name__ == "__main__":
    main()
