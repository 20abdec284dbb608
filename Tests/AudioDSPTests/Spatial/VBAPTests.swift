// Tests. 2-D vector-base amplitude panning on the preset and custom layouts: unit power, the right
// speaker pair, exact gains on and between speakers, LFE silence and mirror symmetry.
import AudioDSP
import Foundation
import Testing

@Suite struct VBAPTests {
    static let layouts: [(String, SpeakerLayout)] =
        SpeakerLayout.presets.filter { $0.name != "stereo" }
        + [("custom 6", SpeakerLayout(azimuthsDegrees: [-20, 25, 70, 160, -150, -80])!)]

    /// Gains by output channel for `direction`.
    static func channelGains(_ layout: SpeakerLayout, _ direction: SourceDirection) -> [Float] {
        let k = VBAPKernel(layout: layout)
        defer { k.deallocate() }
        var sorted = [Float](repeating: 0, count: k.speakerCount)
        sorted.withUnsafeMutableBufferPointer { k.speakerGains(for: direction, into: $0.baseAddress!) }
        var byChannel = [Float](repeating: 0, count: layout.channelCount)
        for s in 0..<k.speakerCount { byChannel[k.channel(ofSpeaker: s)] = sorted[s] }
        return byChannel
    }

    static func degrees(_ a: Double) -> SourceDirection { SourceDirection(azimuth: a * Double.pi / 180, elevation: 0) }

    /// The two speakers whose arc contains `azimuth` (degrees), as channels.
    static func enclosingPair(_ layout: SpeakerLayout, _ azimuth: Double) -> Set<Int> {
        let sorted = layout.speakers.sorted { $0.azimuthDegrees < $1.azimuthDegrees }
        for k in sorted.indices {
            let a = sorted[k]
            let b = sorted[(k + 1) % sorted.count]
            var span = b.azimuthDegrees - a.azimuthDegrees
            if span <= 0 { span += 360 }
            var offset = azimuth - a.azimuthDegrees
            while offset < 0 { offset += 360 }
            while offset >= 360 { offset -= 360 }
            if offset <= span { return [a.channel, b.channel] }
        }
        return []
    }

    @Test(arguments: layouts.map(\.0))
    func gainsHaveUnitPowerOnTheEnclosingPair(name: String) {
        let layout = Self.layouts.first { $0.0 == name }!.1
        for step in 0..<72 {
            let azimuth = -180 + Double(step) * 5 + 1.3
            let g = Self.channelGains(layout, Self.degrees(azimuth))
            let power = g.reduce(0.0) { $0 + Double($1) * Double($1) }
            #expect(abs(power - 1) < 1e-6, "\(name) at \(azimuth)°: power \(power)")
            let active = Set(g.indices.filter { g[$0] > 1e-7 })
            let pair = Self.enclosingPair(layout, azimuth)
            #expect(active.isSubset(of: pair) && !active.isEmpty, "\(name) at \(azimuth)°: \(active) not in \(pair)")
            #expect(g.allSatisfy { $0 >= 0 })
        }
    }

    /// Between two speakers the gains solve p = g₁l₁ + g₂l₂ (Pulkki's eq. 4), checked by rebuilding the
    /// direction; on a speaker that speaker alone plays.
    @Test(arguments: layouts.map(\.0))
    func gainsRebuildTheDirectionAndSpeakersPlayAlone(name: String) {
        let layout = Self.layouts.first { $0.0 == name }!.1
        for azimuth in stride(from: -177.0, through: 177, by: 11) {
            let g = Self.channelGains(layout, Self.degrees(azimuth))
            var x = 0.0
            var y = 0.0
            for s in layout.speakers {
                let a = s.azimuthDegrees * Double.pi / 180
                x += Double(g[s.channel]) * sin(a)
                y += Double(g[s.channel]) * cos(a)
            }
            let rebuilt = atan2(x, y) * 180 / Double.pi
            var error = abs(rebuilt - azimuth)
            if error > 180 { error = 360 - error }
            #expect(error < 1e-4, "\(name): \(azimuth)° rebuilt as \(rebuilt)°")
        }
        for s in layout.speakers {
            let g = Self.channelGains(layout, Self.degrees(s.azimuthDegrees))
            #expect(abs(g[s.channel] - 1) < 1e-6, "\(name): speaker at \(s.azimuthDegrees)°")
        }
    }

    @Test func halfwayBetweenTwoSpeakersIsMinus3dBEach() {
        let g = Self.channelGains(.quad, Self.degrees(0))  // between L (−45°) and R (45°)
        #expect(abs(g[0] - 0.707_106_77) < 1e-6 && abs(g[1] - 0.707_106_77) < 1e-6 && g[2] == 0 && g[3] == 0)
    }

    @Test func lfeGetsNothingAndElevationIsProjected() {
        for layout in [SpeakerLayout.surround51, .surround71] {
            for azimuth in stride(from: -180.0, to: 180, by: 7) {
                #expect(Self.channelGains(layout, Self.degrees(azimuth))[3] == 0)
            }
        }
        let level = Self.channelGains(.surround51, Self.degrees(20))
        let raised = Self.channelGains(.surround51, SourceDirection(azimuth: 20 * Double.pi / 180, elevation: 1.2))
        for c in 0..<6 { #expect(abs(level[c] - raised[c]) < 1e-6) }
        let overhead = Self.channelGains(.quad, SourceDirection(azimuth: 0, elevation: Double.pi / 2))
        #expect(overhead.allSatisfy { abs($0 - 0.5) < 1e-6 })
    }

    /// Stereo's back is a 300° gap with no valid pair: sources there go to the nearer speaker.
    @Test func aGapWiderThan180DegreesGoesToTheNearestSpeaker() {
        #expect(Self.channelGains(.stereo, Self.degrees(100)) == [0, 1])
        #expect(Self.channelGains(.stereo, Self.degrees(-170)) == [1, 0])
        let front = Self.channelGains(.stereo, Self.degrees(10))
        #expect(front[0] > 0 && front[1] > front[0])
    }

    @Test(arguments: SpeakerLayout.presets.map(\.name))
    func mirroringSwapsMirroredSpeakersExactly(name: String) {
        let layout = SpeakerLayout.presets.first { $0.name == name }!.layout
        // Channel of each speaker's mirror image.
        var mirror = [Int](repeating: -1, count: layout.channelCount)
        for s in layout.speakers {
            let m = layout.speakers.first {
                $0.azimuthDegrees == -s.azimuthDegrees || abs($0.azimuthDegrees) == 180 && abs(s.azimuthDegrees) == 180
            }!
            mirror[s.channel] = m.channel
        }
        for d in sampledDirections {
            let g = Self.channelGains(layout, d)
            let h = Self.channelGains(layout, d.mirrored)
            for s in layout.speakers {
                #expect(g[s.channel] == h[mirror[s.channel]], "\(name) at \(d.azimuth)")
            }
        }
    }

    @Test func renderingAccumulatesTheGainsIntoTheChannels() {
        var k = VBAPKernel(layout: .surround51)
        defer { k.deallocate() }
        let d = Self.degrees(-70)
        k.setDirection(d, gain: 0.5, rampFrames: 0)
        let x = spatialNoise(frames: 1000, seed: 12)
        let out = renderSource(x, channelCount: 6) { i, bus, n in k.process(input: i, output: bus, frames: n) }
        let g = Self.channelGains(.surround51, d)
        for c in 0..<6 {
            for i in 0..<x.count { #expect(out[c][i] == x[i] * (g[c] * 0.5)) }
        }
    }

    @Test func layoutsRejectBadChannelLists() {
        #expect(SpeakerLayout(channelCount: 2, speakers: [.init(channel: 2, azimuthDegrees: 0)]) == nil)
        #expect(
            SpeakerLayout(
                channelCount: 2, speakers: [.init(channel: 0, azimuthDegrees: 0), .init(channel: 0, azimuthDegrees: 9)])
                == nil)
        #expect(SpeakerLayout(azimuthsDegrees: [0, .nan]) == nil)
        #expect(SpeakerLayout(azimuthsDegrees: [30, -30], lfeChannels: [5]) == nil)
        #expect(SpeakerLayout(azimuthsDegrees: [270])?.speakers[0].azimuthDegrees == -90)
        #expect(SpeakerLayout.surround71.channelCount == 8 && SpeakerLayout.surround71.speakers.count == 7)
    }
}
