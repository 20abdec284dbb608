// Control side. What the 3D environment needs from an HRTF set: convolvers sized for the set, and HRIR
// pairs written into a convolver's slot. SpatialAssets' `SOFADataset` is the implementation an engine
// gets from its embedding layer; the graph itself never reads a file.

/// A head-related impulse response set that feeds `HRTFConvolver`s.
///
/// Control side only, one thread at a time (implementations may share scratch buffers between calls):
/// an engine calls it under its lock. None of these calls reaches the render thread; the convolver picks
/// a pair up through its `HRIRExchange`.
public protocol HRIRSet: AnyObject {
    /// A convolver sized for this set (filter length, largest delay) with the crossfade of `quality`.
    func makeConvolver(maxBlockFrames: Int, quality: HRTFQuality) -> HRTFConvolver

    /// Writes the pair for `direction` into `slot`: the nearest measurement, or with `interpolated` a
    /// blend of it and its neighbours.
    func fill(_ slot: HRIRSlot, direction: SourceDirection, interpolated: Bool)

    /// The nearest-measurement choice for `direction` as a number (−1: none). Equal keys fill equal
    /// slots, so a caller can skip an update that would publish the same pair again. `hint` is a key
    /// returned before (−1: none), which may make the search cheaper.
    func nearestKey(for direction: SourceDirection, hint: Int) -> Int

    /// Writes the pair `key` (from `nearestKey(for:hint:)`) into `slot`.
    func fill(_ slot: HRIRSlot, nearestKey key: Int)
}
