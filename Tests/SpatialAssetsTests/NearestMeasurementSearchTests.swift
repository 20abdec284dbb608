// Tests. The hinted nearest-measurement search: exact against brute force on irregular sets with
// several radii, and the same keys as libmysofa's tree on the KEMAR set for moving and jumping sources.
import AudioDSP
import DSPTestSupport
import Foundation
@testable import SpatialAssets
import Testing

@Suite struct NearestMeasurementSearchTests {
    /// Brute-force nearest of `points` (x, y, z each) to p, and its squared distance.
    static func bruteForce(_ points: [Float], _ p: (Float, Float, Float)) -> (Int, Float) {
        var best = -1
        var bestDistance = Float.infinity
        for i in 0..<(points.count / 3) {
            let dx = points[3 * i] - p.0, dy = points[3 * i + 1] - p.1, dz = points[3 * i + 2] - p.2
            let d = dx * dx + dy * dy + dz * dz
            if d < bestDistance {
                bestDistance = d
                best = i
            }
        }
        return (best, bestDistance)
    }

    static func squaredDistance(_ points: [Float], _ i: Int, _ p: (Float, Float, Float)) -> Float {
        let dx = points[3 * i] - p.0, dy = points[3 * i + 1] - p.1, dz = points[3 * i + 2] - p.2
        return dx * dx + dy * dy + dz * dz
    }

    /// Random points on two spheres (1 m and 1.6 m), denser in one cap: an irregular grid with several
    /// radii. Queries walk in small steps and sometimes jump; whenever the search answers, its answer is
    /// the brute-force nearest (or exactly as near), and it answers for most small steps.
    @Test func answersAreExactOnAnIrregularSetWithTwoRadii() throws {
        var rng = SeededRandom(seed: 41)
        var points: [Float] = []
        for i in 0..<600 {
            let z = i < 200 ? 0.7 + 0.3 * rng.nextFloat().magnitude : rng.nextFloat()
            let phi = Float.pi * rng.nextFloat()
            let s = (1 - z * z).squareRoot()
            let r: Float = i % 3 == 0 ? 1.6 : 1
            points += [r * s * cos(phi), r * s * sin(phi), r * z]
        }
        let search = try #require(
            points.withUnsafeBufferPointer {
                NearestMeasurementSearch(positions: $0.baseAddress!, count: 600)
            })
        var hint = 0
        var answered = 0
        var angle: Float = 0
        var height: Float = 0
        for step in 0..<20_000 {
            if step % 500 == 0 {
                angle = Float.pi * rng.nextFloat()
                height = rng.nextFloat()
            } else {
                angle += 0.01 * rng.nextFloat()
                height = max(-1, min(1, height + 0.01 * rng.nextFloat()))
            }
            let s = (1 - height * height).squareRoot()
            let p = (1.6 * s * cos(angle), 1.6 * s * sin(angle), 1.6 * height)
            let (expected, expectedDistance) = Self.bruteForce(points, p)
            if let found = search.nearest(p.0, p.1, p.2, hint: hint) {
                answered += 1
                if found != expected {
                    #expect(
                        Self.squaredDistance(points, found, p) <= expectedDistance * (1 + 1e-6),
                        "step \(step): \(found) is not the nearest (\(expected))")
                }
                hint = found
            } else {
                hint = expected
            }
        }
        #expect(answered > 18_000, "the search settled only \(answered) of 20,000 queries")
    }

    /// On Debian's KEMAR set, keys found from the previous key equal libmysofa's tree's for sources that
    /// move along orbits (both hemispheres, so the mirror folding is crossed) and that jump.
    @Test func keysFromAHintEqualTheTreesOnKEMAR() throws {
        let set = try SOFADataset(
            path: kemarPath, sampleRate: 48_000,
            options: SOFADataset.Options(quality: .standard, sampleRate: 48_000))
        #expect(set.search != nil)
        var rng = SeededRandom(seed: 42)
        var key = -1
        var azimuth = 0.0
        var elevation = 0.0
        for step in 0..<20_000 {
            if step % 400 == 0 {
                azimuth = Double(rng.nextFloat()) * Double.pi
                elevation = Double(rng.nextFloat()) * 0.7
            } else {
                azimuth += 0.004 + 0.01 * Double(rng.nextFloat())
                elevation = max(-0.7, min(1.5, elevation + 0.003 * Double(rng.nextFloat())))
            }
            let direction = SourceDirection(azimuth: azimuth, elevation: elevation)
            let tree = set.nearestKey(for: direction)
            let hinted = set.nearestKey(for: direction, hint: key)
            #expect(hinted == tree, "step \(step): azimuth \(azimuth), elevation \(elevation)")
            key = hinted
        }
    }
}
