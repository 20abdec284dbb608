import AudioGraph
import Testing

@Suite struct GraphTopologyTests {
    @Test func mainFeedsOutputByDefault() {
        let engine = TestEngine.make()
        #expect(engine.connections() == [Connection(source: "main", destination: "output", destinationBus: 0)])
        #expect(engine.renderOrder() == ["main", "output"])
    }

    @Test func cycleIsRefusedNamingTheNodes() throws {
        let engine = TestEngine.make()
        try engine.attach(.mixer, name: "a")
        try engine.attach(.mixer, name: "b")
        try engine.attach(.mixer, name: "c")
        try engine.connect("a", to: "b")
        try engine.connect("b", to: "c")
        let error = #expect(throws: EngineError.self) { try engine.connect("c", to: "a") }
        #expect(error?.code == .cycle)
        #expect(error?.message.contains("a → b → c → a") == true)
        #expect(#expect(throws: EngineError.self) { try engine.connect("a", to: "a") }?.code == .cycle)
        #expect(engine.connections().count == 3)
    }

    @Test func onlyChainsReachingOutputOrTapRender() throws {
        let engine = TestEngine.make()
        try engine.attach(.player, name: "p1")
        try engine.attach(.player, name: "p2")
        try engine.attach(.mixer, name: "sub")
        try engine.connect("p1", to: "sub")
        #expect(!engine.renderOrder().contains("p1"))
        try engine.connect("sub", to: "main")
        #expect(engine.renderOrder() == ["p1", "sub", "main", "output"])
        #expect(!engine.renderOrder().contains("p2"))
        let tap = try engine.installTap(on: "p2", frameCount: 64) { _ in }
        #expect(engine.renderOrder().contains("p2"))
        engine.removeTap(tap)
        #expect(!engine.renderOrder().contains("p2"))
        try engine.disconnect("sub", from: "main")
        #expect(engine.renderOrder() == ["main", "output"])
        let active = engine.nodes().filter(\.isActive).map(\.name)
        #expect(active == ["main", "output"])
    }

    @Test func fanOutFeedsEveryDestination() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("one", value: 0.25))
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("one"), "loop": .bool(true),
                "playing": .bool(true)
            ])
        try engine.attach(.mixer, name: "m1")
        try engine.attach(.mixer, name: "m2")
        try engine.connect("p", to: "m1")
        try engine.connect("p", to: "m2")
        try engine.connect("m1", to: "main")
        try engine.connect("m2", to: "main")
        let out = TestEngine.render(engine, frames: 256)
        // Mono 0.25 panned centre is 0.25/√2 per side in each submix; two submixes add.
        let expected = Float(2 * 0.25 / 2.0.squareRoot())
        #expect(abs(out[0][100] - expected) < 1e-6)
        #expect(abs(out[1][100] - expected) < 1e-6)
    }

    @Test func connectingToAnOccupiedInputReplacesIt() throws {
        let engine = TestEngine.make()
        try engine.attach(.mixer, name: "a")
        try engine.attach(.mixer, name: "b")
        try engine.connect("a", to: "output")
        #expect(engine.connections().filter { $0.destination == "output" }.map(\.source) == ["a"])
        try engine.connect("b", to: "output:0")
        #expect(engine.connections().filter { $0.destination == "output" }.map(\.source) == ["b"])
    }

    @Test func mixerTakesNextAvailableInputBus() throws {
        let engine = TestEngine.make()
        for name in ["a", "b", "c"] { try engine.attach(.player, name: name) }
        try engine.connect("a", to: "main")
        try engine.connect("b", to: "main:5")
        try engine.connect("c", to: "main")
        let buses = engine.connections().filter { $0.destination == "main" }.map(\.destinationBus)
        #expect(buses == [0, 5, 1])
    }

    @Test func badRequestsNameTheProblem() throws {
        let engine = TestEngine.make()
        try engine.attach(.player, name: "p")
        #expect(#expect(throws: EngineError.self) { try engine.connect("nope", to: "main") }?.code == .unknownNode)
        #expect(#expect(throws: EngineError.self) { try engine.connect("p:1", to: "main") }?.code == .invalidBus)
        #expect(#expect(throws: EngineError.self) { try engine.connect("main", to: "p") }?.code == .invalidBus)
        #expect(#expect(throws: EngineError.self) { try engine.connect("output", to: "main") }?.code == .invalidBus)
        #expect(#expect(throws: EngineError.self) { try engine.connect("p:x", to: "main") }?.code == .invalidBus)
        #expect(#expect(throws: EngineError.self) { try engine.attach(.mixer, name: "p") }?.code == .duplicateName)
        #expect(#expect(throws: EngineError.self) { try engine.attach(.mixer, name: "a/b") }?.code == .invalidName)
        #expect(#expect(throws: EngineError.self) { try engine.detach("main") }?.code == .notAllowed)
        #expect(#expect(throws: EngineError.self) { try engine.set("p", "volume", to: .float(2)) }?.code == .outOfRange)
        #expect(
            #expect(throws: EngineError.self) { try engine.set("p", "volume", to: .float(.nan)) }?.code == .outOfRange)
        #expect(
            #expect(throws: EngineError.self) { try engine.set("p", "gain", to: .float(1)) }?.code == .unknownParameter)
        #expect(
            #expect(throws: EngineError.self) { try engine.set("p", "buffer", to: .string("x")) }?.code
                == .unknownBuffer)
        #expect(#expect(throws: EngineError.self) { try engine.set("p", "loop", to: .string("x")) }?.code == .wrongType)
        #expect(#expect(throws: EngineError.self) { try engine.set("p", "channels", to: .int(1)) }?.code == .readOnly)
        #expect(
            #expect(throws: EngineError.self) {
                try engine.attach(.player, name: "q", parameters: ["volume": .float(3)])
            }?.code == .outOfRange)
        #expect(!engine.nodes().map(\.name).contains("q"))
    }

    @Test func detachRemovesConnectionsAndTaps() throws {
        let engine = TestEngine.make()
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "main")
        _ = try engine.installTap(on: "p", frameCount: 32) { _ in }
        try engine.detach("p")
        #expect(engine.connections().count == 1)
        #expect(engine.renderOrder() == ["main", "output"])
        #expect(#expect(throws: EngineError.self) { try engine.get("p", "volume") }?.code == .unknownNode)
    }

    @Test func boolsAndNumbersAreCoerced() throws {
        let engine = TestEngine.make()
        try engine.attach(.player, name: "p")
        try engine.set("p", "loop", to: .int(1))
        #expect(try engine.get("p", "loop") == .bool(true))
        try engine.set("p", "volume", to: .int(0))
        #expect(try engine.get("p", "volume") == .float(0))
        try engine.set("p", "start", to: .float(0))
        #expect(try engine.get("p", "start") == .int(0))
    }
}
