// Control side: init, deallocate. Render side: forward, inverse (no allocation, no locks).

/// Real FFT of a power-of-two size `n`, computed as a complex radix-2 FFT of size n/2 on the even/odd
/// samples packed as real/imaginary parts, then split into the n/2 + 1 bins of the real transform
/// (E. O. Brigham, *The Fast Fourier Transform and Its Applications*, 1988, §9-4, "Two N-point real
/// sequences / a 2N-point real sequence"). Unscaled forward, 1/n-scaled inverse, so inverse∘forward = id.
/// Spectra are split arrays (`re`, `im`) of n/2 + 1 bins. Cost: about 2.5·n·log2(n) flops per transform.
public struct VoiceFFT {
    public let size: Int
    @usableFromInline let half: Int
    @usableFromInline let workRe: UnsafeMutablePointer<Float>
    @usableFromInline let workIm: UnsafeMutablePointer<Float>
    /// The twiddles of the complex transform's stages of length L ≥ 8, stage after stage, each
    /// contiguous: e^{−2πij/L}, j < L/2, from index L/2 − 4 (so the butterflies run over contiguous
    /// memory and vectorise).
    @usableFromInline let twiddleRe: UnsafeMutablePointer<Float>
    @usableFromInline let twiddleIm: UnsafeMutablePointer<Float>
    /// e^{−2πik/n}, k ≤ half: the split twiddles.
    @usableFromInline let splitRe: UnsafeMutablePointer<Float>
    @usableFromInline let splitIm: UnsafeMutablePointer<Float>
    @usableFromInline let bitReverse: UnsafeMutablePointer<Int32>

    /// `size` must be a power of two, at least 4.
    public init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "VoiceFFT size must be a power of two")
        self.size = size
        half = size / 2
        workRe = .allocate(capacity: half)
        workIm = .allocate(capacity: half)
        twiddleRe = .allocate(capacity: max(1, half))
        twiddleIm = .allocate(capacity: max(1, half))
        splitRe = .allocate(capacity: half + 1)
        splitIm = .allocate(capacity: half + 1)
        bitReverse = .allocate(capacity: half)
        twiddleRe.initialize(repeating: 1, count: max(1, half))
        twiddleIm.initialize(repeating: 0, count: max(1, half))
        var length = 8
        while length <= half {
            let step = half / length
            for j in 0..<(length / 2) {
                let a = -2 * EffectMath.pi * Double(j * step) / Double(half)
                let (sine, cosine) = EffectMath.sinCos(a)
                twiddleRe[length / 2 - 4 + j] = Float(cosine)
                twiddleIm[length / 2 - 4 + j] = Float(sine)
            }
            length *= 2
        }
        for k in 0...half {
            let a = -2 * EffectMath.pi * Double(k) / Double(size)
            let (sine, cosine) = EffectMath.sinCos(a)
            splitRe[k] = Float(cosine)
            splitIm[k] = Float(sine)
        }
        var bits = 0
        while 1 << bits < half { bits += 1 }
        for i in 0..<half {
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            bitReverse[i] = Int32(r)
        }
    }

    public func deallocate() {
        workRe.deallocate()
        workIm.deallocate()
        twiddleRe.deallocate()
        twiddleIm.deallocate()
        splitRe.deallocate()
        splitIm.deallocate()
        bitReverse.deallocate()
    }

    /// In-place complex FFT of `workRe`/`workIm` (size half), forward sign; input already bit-reversed.
    /// The first two stages (twiddles ±1, ±i) are done without multiplications; the others run two at a
    /// time (half the passes over memory), block by block over contiguous quarters and twiddles. Each
    /// butterfly computes exactly what it would stage by stage, from the same inputs, so the results do
    /// not depend on the loop order.
    @inlinable
    func complexTransform() {
        let re = workRe
        let im = workIm
        // Stages 1 and 2 (lengths 2 and 4; twiddles 1 and −i) in one pass, four points at a time.
        var a = 0
        if half < 4 {
            while a < half {
                let tr = re[a + 1]
                let ti = im[a + 1]
                re[a + 1] = re[a] - tr
                im[a + 1] = im[a] - ti
                re[a] += tr
                im[a] += ti
                a += 2
            }
        }
        while half >= 4 && a < half {
            // Stage 1: (0, 1) and (2, 3).
            let x1Re = re[a] - re[a + 1]
            let x1Im = im[a] - im[a + 1]
            let x0Re = re[a] + re[a + 1]
            let x0Im = im[a] + im[a + 1]
            let x3Re = re[a + 2] - re[a + 3]
            let x3Im = im[a + 2] - im[a + 3]
            let x2Re = re[a + 2] + re[a + 3]
            let x2Im = im[a + 2] + im[a + 3]
            // Stage 2: (0, 2), and (1, 3) with −i: (re + i·im)·(−i) = im − i·re.
            re[a + 2] = x0Re - x2Re
            im[a + 2] = x0Im - x2Im
            re[a] = x0Re + x2Re
            im[a] = x0Im + x2Im
            let tr = x3Im
            let ti = -x3Re
            re[a + 3] = x1Re - tr
            im[a + 3] = x1Im - ti
            re[a + 1] = x1Re + tr
            im[a + 1] = x1Im + ti
            a += 4
        }
        // The other stages two at a time (lengths L and 2L in one pass over the data): within each block of
        // 2L, the four points j, j + L/2, j + L, j + 3L/2 go through both stages' butterflies in registers,
        // with the same twiddles from the same table as stage by stage.
        var length = 8
        while 2 * length <= half {
            let q = length / 2
            let w1Re = twiddleRe + (q - 4)
            let w1Im = twiddleIm + (q - 4)
            let w2Re = twiddleRe + (length - 4)
            let w2Im = twiddleIm + (length - 4)
            var start = 0
            while start < half {
                let p0Re = re + start
                let p0Im = im + start
                let p1Re = p0Re + q
                let p1Im = p0Im + q
                let p2Re = p0Re + 2 * q
                let p2Im = p0Im + 2 * q
                let p3Re = p0Re + 3 * q
                let p3Im = p0Im + 3 * q
                // Four j at a time (q is a multiple of 4): SIMD lanes, each lane the scalar arithmetic.
                var j = 0
                while j < q {
                    // Stage L: (0, 1) and (2, 3), twiddle w1[j].
                    let ar = VoiceLanes.load(w1Re + j)
                    let ai = VoiceLanes.load(w1Im + j)
                    let y1Re = VoiceLanes.load(p1Re + j)
                    let y1Im = VoiceLanes.load(p1Im + j)
                    var tr = y1Re * ar - y1Im * ai
                    var ti = y1Re * ai + y1Im * ar
                    let y0Re = VoiceLanes.load(p0Re + j)
                    let y0Im = VoiceLanes.load(p0Im + j)
                    let x1Re = y0Re - tr
                    let x1Im = y0Im - ti
                    let x0Re = y0Re + tr
                    let x0Im = y0Im + ti
                    let y3Re = VoiceLanes.load(p3Re + j)
                    let y3Im = VoiceLanes.load(p3Im + j)
                    tr = y3Re * ar - y3Im * ai
                    ti = y3Re * ai + y3Im * ar
                    let y2Re = VoiceLanes.load(p2Re + j)
                    let y2Im = VoiceLanes.load(p2Im + j)
                    let x3Re = y2Re - tr
                    let x3Im = y2Im - ti
                    let x2Re = y2Re + tr
                    let x2Im = y2Im + ti
                    // Stage 2L: (0, 2) with w2[j], (1, 3) with w2[j + L/2].
                    let br = VoiceLanes.load(w2Re + j)
                    let bi = VoiceLanes.load(w2Im + j)
                    tr = x2Re * br - x2Im * bi
                    ti = x2Re * bi + x2Im * br
                    VoiceLanes.store(x0Re - tr, p2Re + j)
                    VoiceLanes.store(x0Im - ti, p2Im + j)
                    VoiceLanes.store(x0Re + tr, p0Re + j)
                    VoiceLanes.store(x0Im + ti, p0Im + j)
                    let cr = VoiceLanes.load(w2Re + j + q)
                    let ci = VoiceLanes.load(w2Im + j + q)
                    tr = x3Re * cr - x3Im * ci
                    ti = x3Re * ci + x3Im * cr
                    VoiceLanes.store(x1Re - tr, p3Re + j)
                    VoiceLanes.store(x1Im - ti, p3Im + j)
                    VoiceLanes.store(x1Re + tr, p1Re + j)
                    VoiceLanes.store(x1Im + ti, p1Im + j)
                    j += 4
                }
                start += 2 * length
            }
            length *= 4
        }
        // A last stage on its own when their count is odd.
        if length <= half {
            let h = length / 2
            let wRe = twiddleRe + (h - 4)
            let wIm = twiddleIm + (h - 4)
            let lowRe = re
            let lowIm = im
            let highRe = re + h
            let highIm = im + h
            for j in 0..<h {
                let wr = wRe[j]
                let wi = wIm[j]
                let tr = highRe[j] * wr - highIm[j] * wi
                let ti = highRe[j] * wi + highIm[j] * wr
                highRe[j] = lowRe[j] - tr
                highIm[j] = lowIm[j] - ti
                lowRe[j] += tr
                lowIm[j] += ti
            }
        }
    }

    /// X = FFT(x): `x` has `size` samples; writes size/2 + 1 bins.
    @inlinable
    public func forward(_ x: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        for i in 0..<half {
            let r = Int(bitReverse[i])
            workRe[r] = x[2 * i]
            workIm[r] = x[2 * i + 1]
        }
        complexTransform()
        // Bins 1 ..< half four at a time (Z[half − k] read backwards), the rest one by one; each lane is
        // the scalar arithmetic of `splitBin`.
        var k = 1
        while k + 4 <= half {
            let m = half - k - 3
            let ar = VoiceLanes.load(workRe + k)
            let ai = VoiceLanes.load(workIm + k)
            let br = VoiceLanes.reversed(VoiceLanes.load(workRe + m))
            let bi = VoiceLanes.negated(VoiceLanes.reversed(VoiceLanes.load(workIm + m)))
            let eRe = 0.5 * (ar + br)
            let eIm = 0.5 * (ai + bi)
            let oRe = 0.5 * (ai - bi)
            let oIm = -0.5 * (ar - br)
            let wr = VoiceLanes.load(splitRe + k)
            let wi = VoiceLanes.load(splitIm + k)
            VoiceLanes.store(eRe + wr * oRe - wi * oIm, re + k)
            VoiceLanes.store(eIm + wr * oIm + wi * oRe, im + k)
            k += 4
        }
        while k < half {
            splitBin(k, re: re, im: im)
            k += 1
        }
        splitBin(0, re: re, im: im)
        splitBin(half, re: re, im: im)
    }

    /// Bin `k` of the real transform from the complex one in `workRe`, `workIm`.
    @inline(__always) @usableFromInline
    func splitBin(_ k: Int, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        let a = k == half ? 0 : k
        let m = k == 0 ? 0 : half - k
        let ar = workRe[a]
        let ai = workIm[a]
        let br = workRe[m]
        let bi = -workIm[m]
        let eRe = 0.5 * (ar + br)
        let eIm = 0.5 * (ai + bi)
        // Fo = −i·(Z[k] − conj Z[half−k])/2
        let oRe = 0.5 * (ai - bi)
        let oIm = -0.5 * (ar - br)
        let wr = splitRe[k]
        let wi = splitIm[k]
        re[k] = eRe + wr * oRe - wi * oIm
        im[k] = eIm + wr * oIm + wi * oRe
    }

    /// x = IFFT(X) with 1/size scaling: reads size/2 + 1 bins (the imaginary parts of bins 0 and size/2
    /// are ignored), writes `size` samples.
    @inlinable
    public func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, _ x: UnsafeMutablePointer<Float>) {
        let scale = 1 / Float(half)
        // Bins 1 ..< half four at a time (X[half − k] read backwards), the rest one by one; each lane is
        // the scalar arithmetic of `joinBin`.
        typealias L = VoiceLanes
        var k = 1
        while k + 4 <= half {
            let m = half - k - 3
            let ar = L.load(re + k)
            let ai = L.load(im + k)
            let br = L.reversed(L.load(re + m))
            let bi = L.negated(L.reversed(L.load(im + m)))
            let eRe = 0.5 * (ar + br)
            let eIm = 0.5 * (ai + bi)
            let dRe = 0.5 * (ar - br)
            let dIm = 0.5 * (ai - bi)
            let wr = L.load(splitRe + k)
            let wi = L.negated(L.load(splitIm + k))
            let oRe = dRe * wr - dIm * wi
            let oIm = dRe * wi + dIm * wr
            let zRe = eRe - oIm
            let zIm = L.negated(eIm + oRe)
            for lane in 0..<4 {
                let r = Int(bitReverse[k + lane])
                workRe[r] = zRe[lane]
                workIm[r] = zIm[lane]
            }
            k += 4
        }
        while k < half {
            joinBin(k, re: re, im: im)
            k += 1
        }
        joinBin(0, re: re, im: im)
        complexTransform()
        for i in 0..<half {
            x[2 * i] = workRe[i] * scale
            x[2 * i + 1] = -workIm[i] * scale
        }
    }

    /// Bin `k` (< half) of a real spectrum into the complex transform's input, at its bit-reversed place.
    @inline(__always) @usableFromInline
    func joinBin(_ k: Int, re: UnsafePointer<Float>, im: UnsafePointer<Float>) {
        let m = half - k
        let ar = re[k]
        let ai = k == 0 ? 0 : im[k]
        let br = re[m]
        let bi = m == half ? 0 : -im[m]
        let eRe = 0.5 * (ar + br)
        let eIm = 0.5 * (ai + bi)
        let dRe = 0.5 * (ar - br)
        let dIm = 0.5 * (ai - bi)
        // Fo = d·conj(W^k)
        let wr = splitRe[k]
        let wi = -splitIm[k]
        let oRe = dRe * wr - dIm * wi
        let oIm = dRe * wi + dIm * wr
        // Z = Fe + i·Fo, conjugated for the inverse through the forward transform.
        let r = Int(bitReverse[k])
        workRe[r] = eRe - oIm
        workIm[r] = -(eIm + oRe)
    }
}
