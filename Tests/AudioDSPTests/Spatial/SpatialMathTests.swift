// Tests. The libm-free inverse trigonometry against Glibc, and its exact odd symmetry.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct SpatialMathTests {
    static let arguments: [Double] = {
        var rng = SeededRandom(seed: 11)
        return (0..<400).map { _ in Double(rng.nextFloat()) * 40 } + [0, 1, -1, 0.267_949_192_431_122_7, 1e-9, 1e9]
    }()

    @Test func atanAndAtan2MatchGlibc() {
        for x in Self.arguments {
            #expect(abs(SpatialMath.atan(x) - Foundation.atan(x)) <= 1e-14 * max(1, abs(x)), "atan(\(x))")
            for y in [-2.5, -0.3, 0, 0.7, 3] {
                #expect(abs(SpatialMath.atan2(y, x) - Foundation.atan2(y, x)) <= 1e-14, "atan2(\(y), \(x))")
            }
        }
        #expect(SpatialMath.atan2(0, -1) == Double.pi)
        #expect(SpatialMath.atan2(-0.0, -1) == -Double.pi)
        #expect(SpatialMath.atan2(0, 0) == 0)
    }

    @Test func asinAndAcosMatchGlibcIncludingTheEnds() {
        for i in 0...2000 {
            let x = Double(i) / 1000 - 1
            #expect(abs(SpatialMath.asin(x) - Foundation.asin(x)) <= 1e-14, "asin(\(x))")
            #expect(abs(SpatialMath.acos(x) - Foundation.acos(x)) <= 1e-14, "acos(\(x))")
        }
        #expect(SpatialMath.acos(1.000_000_1) == 0)
        #expect(SpatialMath.asin(-1.000_000_1) == -Double.pi / 2)
    }

    @Test func oddFunctionsAreExactlyOdd() {
        for x in Self.arguments {
            #expect(SpatialMath.atan(-x) == -SpatialMath.atan(x))
            #expect(SpatialMath.atan2(-x, 0.37) == -SpatialMath.atan2(x, 0.37))
            #expect(SpatialMath.sinCos(-x).sin == -SpatialMath.sinCos(x).sin)
            #expect(SpatialMath.sinCos(-x).cos == SpatialMath.sinCos(x).cos)
        }
    }
}
