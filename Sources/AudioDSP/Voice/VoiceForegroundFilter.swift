// Control side: init, deallocate. Render side: setFilter, push (no allocation, no locks).

/// A frozen copy of the linear filter: the echo estimate of the filter as it was the last time it was
/// trusted. A near talker far louder than the echo pulls an adaptive filter off its solution for a
/// second or so (SpeexDSP's own ERLE falls to a few dB); the room has not changed, so the copy taken
/// before the talker spoke still cancels the echo meanwhile. The kernel uses whichever of the two
/// errors is smaller (a "two-path" canceller, after Ochiai, Araseki and Ogihara, 1977).
///
/// The copy is the filter's impulse response (from `SPEEX_ECHO_GET_IMPULSE_RESPONSE`), applied to the
/// same reference as the filter by partitioned overlap-save convolution, one frame per partition.
public struct VoiceForegroundFilter {
    public let frameLength: Int
    let fftSize: Int
    let binCount: Int
    let partitionCount: Int
    let fft: VoiceFFT
    let filterRe: UnsafeMutablePointer<Float>
    let filterIm: UnsafeMutablePointer<Float>
    let spectraRe: UnsafeMutablePointer<Float>
    let spectraIm: UnsafeMutablePointer<Float>
    var spectrumIndex = 0
    let input: UnsafeMutablePointer<Float>
    let time: UnsafeMutablePointer<Float>
    let accumulatorRe: UnsafeMutablePointer<Float>
    let accumulatorIm: UnsafeMutablePointer<Float>
    /// This frame's echo estimate.
    public let estimate: UnsafeMutablePointer<Float>
    public private(set) var hasFilter = false

    public init(frameLength: Int, filterLength: Int) {
        precondition(frameLength > 0 && filterLength > 0)
        self.frameLength = frameLength
        var size = 4
        while size < 2 * frameLength { size *= 2 }
        fftSize = size
        binCount = size / 2 + 1
        partitionCount = (filterLength + frameLength - 1) / frameLength
        fft = VoiceFFT(size: size)
        let spectra = partitionCount * binCount
        filterRe = .allocate(capacity: spectra)
        filterRe.initialize(repeating: 0, count: spectra)
        filterIm = .allocate(capacity: spectra)
        filterIm.initialize(repeating: 0, count: spectra)
        spectraRe = .allocate(capacity: spectra)
        spectraRe.initialize(repeating: 0, count: spectra)
        spectraIm = .allocate(capacity: spectra)
        spectraIm.initialize(repeating: 0, count: spectra)
        input = .allocate(capacity: size)
        input.initialize(repeating: 0, count: size)
        time = .allocate(capacity: size)
        time.initialize(repeating: 0, count: size)
        accumulatorRe = .allocate(capacity: binCount)
        accumulatorIm = .allocate(capacity: binCount)
        estimate = .allocate(capacity: frameLength)
        estimate.initialize(repeating: 0, count: frameLength)
    }

    public func deallocate() {
        fft.deallocate()
        filterRe.deallocate()
        filterIm.deallocate()
        spectraRe.deallocate()
        spectraIm.deallocate()
        input.deallocate()
        time.deallocate()
        accumulatorRe.deallocate()
        accumulatorIm.deallocate()
        estimate.deallocate()
    }

    /// Takes a copy of the filter: `response(i)`, i < `length`, in output per input.
    public mutating func setFilter(length: Int, _ response: (Int) -> Float) {
        let f = frameLength
        for p in 0..<partitionCount {
            for i in 0..<fftSize { time[i] = 0 }
            for i in 0..<f where p * f + i < length { time[i] = response(p * f + i) }
            fft.forward(time, re: filterRe + p * binCount, im: filterIm + p * binCount)
        }
        hasFilter = true
    }

    /// One frame of the reference the filter sees; computes this frame's `estimate`.
    public mutating func push(_ x: UnsafePointer<Float>) {
        let f = frameLength
        let n = fftSize
        let bins = binCount
        for i in 0..<(n - f) { input[i] = input[i + f] }
        for i in 0..<f { input[n - f + i] = x[i] }
        spectrumIndex = (spectrumIndex + partitionCount - 1) % partitionCount
        let offset = spectrumIndex * bins
        fft.forward(input, re: spectraRe + offset, im: spectraIm + offset)
        for k in 0..<bins {
            accumulatorRe[k] = 0
            accumulatorIm[k] = 0
        }
        for p in 0..<partitionCount {
            let s = ((spectrumIndex + p) % partitionCount) * bins
            let h = p * bins
            for k in 0..<bins {
                let xr = spectraRe[s + k]
                let xi = spectraIm[s + k]
                let hr = filterRe[h + k]
                let hi = filterIm[h + k]
                accumulatorRe[k] += hr * xr - hi * xi
                accumulatorIm[k] += hr * xi + hi * xr
            }
        }
        // Overlap-save: the last frame of the circular convolution is the linear one.
        fft.inverse(re: accumulatorRe, im: accumulatorIm, time)
        for i in 0..<f { estimate[i] = time[n - f + i] }
    }
}
