// Test support. The full example patch in YAML and JSON, and the model both must parse to.

import Patches

/// Shared example patches for the Patches tests.
enum PatchFixtures {
    /// Every section and key of format version 1. Line numbers matter: tests assert locations.
    static let fullYAML = """
        version: 1
        engine:
          sampleRate: 48000
          outputs: 2
          inputs: 2
          blockFrames: 64
        buffers:
          - name: tone
            file: sounds/tone.wav
            start: 0
            frames: 48000
          - name: beep
            generate:
              waveform: sine
              frequency: 440
              duration: 1.0
              amplitude: 0.5
              channels: 1
        nodes:
          - name: p1
            kind: player
            params:
              buffer: tone
              loops: -1
              volume: 0.8
          - name: sub
            kind: mixer
            params:
              gains: [0.5, 1, -3e-1]
              mute: off
              label: "yes"
        connections:
          - from: p1
            to: sub
          - { from: "sub:0", to: main }
        taps:
          - node: sub
        jack:
          connect:
            - from: out_1
              to: system:playback_1
          connectPhysical: true

        """

    /// ``fullYAML`` written as JSON.
    static let fullJSON = """
        {
          "version": 1,
          "engine": {"sampleRate": 48000, "outputs": 2, "inputs": 2, "blockFrames": 64},
          "buffers": [
            {"name": "tone", "file": "sounds/tone.wav", "start": 0, "frames": 48000},
            {"name": "beep", "generate": {"waveform": "sine", "frequency": 440, "duration": 1.0,
                                          "amplitude": 0.5, "channels": 1}}
          ],
          "nodes": [
            {"name": "p1", "kind": "player", "params": {"buffer": "tone", "loops": -1, "volume": 0.8}},
            {"name": "sub", "kind": "mixer", "params": {"gains": [0.5, 1, -3e-1], "mute": "off", "label": "yes"}}
          ],
          "connections": [{"from": "p1", "to": "sub"}, {"from": "sub:0", "to": "main"}],
          "taps": [{"node": "sub"}],
          "jack": {"connect": [{"from": "out_1", "to": "system:playback_1"}], "connectPhysical": true}
        }
        """

    /// What ``fullYAML`` and ``fullJSON`` say, without locations.
    static let fullDocument = PatchDocument(
        engine: PatchEngineSettings(sampleRate: 48000, outputChannelCount: 2, inputChannelCount: 2, blockFrames: 64),
        buffers: [
            PatchBuffer(name: "tone", source: .file(path: "sounds/tone.wav"), start: 0, frames: 48000),
            PatchBuffer(
                name: "beep",
                source: .generate(PatchGenerator(waveform: .sine, frequency: 440, duration: 1, amplitude: 0.5)))
        ],
        nodes: [
            PatchNode(
                name: "p1", kind: "player",
                params: [
                    PatchParameter(key: "buffer", value: "tone"),
                    PatchParameter(key: "loops", value: -1),
                    PatchParameter(key: "volume", value: 0.8)
                ]),
            PatchNode(
                name: "sub", kind: "mixer",
                params: [
                    PatchParameter(key: "gains", value: [0.5, 1, -0.3]),
                    PatchParameter(key: "mute", value: "off"),
                    PatchParameter(key: "label", value: "yes")
                ])
        ],
        connections: [
            PatchConnection(from: PatchEndpoint(node: "p1"), to: PatchEndpoint(node: "sub")),
            PatchConnection(from: PatchEndpoint(node: "sub", bus: 0), to: PatchEndpoint(node: "main"))
        ],
        taps: [PatchTap(node: "sub", bus: 0)],
        jack: PatchJackSettings(
            connections: [PatchJackConnection(from: "out_1", to: "system:playback_1")], connectPhysical: true)
    )
}
