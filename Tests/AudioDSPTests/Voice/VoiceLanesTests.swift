@testable import AudioDSP
import Testing

/// The lane helpers promise the scalar arithmetic's bits: the per-bin loops written with them give the
/// same output as bin by bin.
@Suite struct VoiceLanesTests {
    @Test func maxChoosesAsTheStandardLibrarysMax() {
        let values: [Float] = [0, -0.0, 1, -1, 1e-30, .infinity, 3, 3]
        for x in values {
            for y in values {
                let lanes = VoiceLanes.max(VoiceLanes.Lanes(repeating: x), VoiceLanes.Lanes(repeating: y))
                for lane in 0..<4 {
                    #expect(lanes[lane].bitPattern == max(x, y).bitPattern, "max(\(x), \(y))")
                }
            }
        }
    }

    @Test func negationKeepsTheSignOfZero() {
        let v = VoiceLanes.Lanes(0, -0.0, 2.5, -7)
        let n = VoiceLanes.negated(v)
        for lane in 0..<4 { #expect(n[lane].bitPattern == (-v[lane]).bitPattern) }
    }

    @Test func partialLoadsAndStoresTouchOnlyTheirLanes() {
        var source: [Float] = [1, 2, 3, 4, 5]
        var target = [Float](repeating: 9, count: 5)
        source.withUnsafeMutableBufferPointer { s in
            target.withUnsafeMutableBufferPointer { t in
                let one = VoiceLanes.load(s.baseAddress! + 4, count: 1)
                #expect(one == VoiceLanes.Lanes(5, 0, 0, 0))
                VoiceLanes.store(VoiceLanes.load(s.baseAddress!, count: 4), t.baseAddress!, count: 4)
                VoiceLanes.store(one, t.baseAddress! + 4, count: 1)
            }
        }
        #expect(target == source)
    }

    @Test func sumsAddLaneAfterLane() {
        // 1 + 1e8 − 1e8 + 1: in lane order 1 (the first 1 is lost against 1e8); paired it would be 2 or 0.
        let v = VoiceLanes.Lanes(1, 1e8, -1e8, 1)
        var sum: Float = 0
        VoiceLanes.add(v, to: &sum, count: 4)
        var scalar: Float = 0
        for lane in 0..<4 { scalar += v[lane] }
        #expect(sum.bitPattern == scalar.bitPattern)
        var first: Float = 0
        VoiceLanes.add(v, to: &first, count: 1)
        #expect(first == 1)
    }
}
