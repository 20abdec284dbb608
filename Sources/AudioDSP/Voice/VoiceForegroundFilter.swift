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
    var convolution: PartitionedConvolution
    /// The reference's last `fftSize` samples, and the spectra of the latest `partitionCount` windows.
    let input: UnsafeMutablePointer<Float>
    let spectraRe: UnsafeMutablePointer<Float>
    let spectraIm: UnsafeMutablePointer<Float>
    var spectrumIndex = 0
    /// This frame's echo estimate.
    public let estimate: UnsafeMutablePointer<Float>
    public var hasFilter: Bool { convolution.hasFilter }

    public init(frameLength: Int, filterLength: Int) {
        self.frameLength = frameLength
        convolution = PartitionedConvolution(frameLength: frameLength, filterLength: filterLength)
        let size = convolution.fftSize
        let spectra = convolution.partitionCount * convolution.binCount
        input = .allocate(capacity: size)
        input.initialize(repeating: 0, count: size)
        spectraRe = .allocate(capacity: spectra)
        spectraRe.initialize(repeating: 0, count: spectra)
        spectraIm = .allocate(capacity: spectra)
        spectraIm.initialize(repeating: 0, count: spectra)
        estimate = .allocate(capacity: frameLength)
        estimate.initialize(repeating: 0, count: frameLength)
    }

    public func deallocate() {
        convolution.deallocate()
        input.deallocate()
        spectraRe.deallocate()
        spectraIm.deallocate()
        estimate.deallocate()
    }

    /// Forgets the copy: `hasFilter` is false until the next `setFilter`.
    public mutating func forget() { convolution.forget() }

    /// Takes a copy of the filter: `response(i)`, i < `length`, in output per input.
    public mutating func setFilter(length: Int, _ response: (Int) -> Float) {
        convolution.setFilter(length: length, response)
    }

    /// One frame of the reference the filter sees; computes this frame's `estimate`.
    public mutating func push(_ x: UnsafePointer<Float>) {
        let partitions = convolution.partitionCount
        spectrumIndex = (spectrumIndex + partitions - 1) % partitions
        convolution.slide(input, by: x, ringRe: spectraRe, ringIm: spectraIm, row: spectrumIndex)
        convolution.apply(ringRe: spectraRe, ringIm: spectraIm, newest: spectrumIndex, into: estimate)
    }
}
