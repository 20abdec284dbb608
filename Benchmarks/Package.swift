// swift-tools-version:6.1
// Soundstage benchmarks: a package of their own (swift-nio style), so the main build stays free of
// package-benchmark. Run from the repository root:
//   swift package --package-path Benchmarks benchmark
//   Benchmarks/run.sh
// See docs/benchmarks.md.
import PackageDescription

let package = Package(
    name: "SoundstageBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The root package, named explicitly: a path dependency's identity is otherwise its folder name,
        // which is "main" in one checkout and something else in another clone.
        .package(name: "Soundstage", path: ".."),
        // ordo-one/benchmark (formerly package-benchmark; the plugin warns that the old identifier will
        // go). The MallocInterposer trait alone: the RuntimeInterposer trait needs swift-runtime-interposer,
        // which our machines cannot resolve.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // Already in the graph through ordo-one/benchmark; named here because GraphBenchmarks installs its
        // allocation hook to count the render thread's own mallocs.
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1")
    ],
    targets: [
        // Shared fixtures: engine set-up and the render loop, used by both executables below.
        .target(
            name: "RenderFixtures",
            dependencies: [.product(name: "AudioGraph", package: "Soundstage")],
            path: "Support/RenderFixtures"
        ),
        // Counts the render thread's own mallocs, retains and releases inside the render calls.
        .target(name: "CRenderProbe", path: "Support/CRenderProbe"),
        .executableTarget(
            name: "GraphBenchmarks",
            dependencies: [
                "RenderFixtures",
                "CRenderProbe",
                .product(name: "AudioGraph", package: "Soundstage"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer")
            ],
            path: "GraphBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Plain measurement without the plugin: CPU ms per second of audio, per player, × real time.
        .executableTarget(
            name: "RenderCost",
            dependencies: ["RenderFixtures", .product(name: "AudioGraph", package: "Soundstage")],
            path: "Tools/RenderCost"
        ),
        // Plain measurement of one moving source through each spatial rendering kernel.
        .executableTarget(
            name: "SpatialCost",
            dependencies: [
                .product(name: "AudioDSP", package: "Soundstage"),
                .product(name: "SpatialAssets", package: "Soundstage")
            ],
            path: "Tools/SpatialCost"
        ),
        // OpenAL Soft (Debian's libopenal, apt libopenal-dev): a benchmark-only dependency, for OpenALCompare.
        .systemLibrary(
            name: "COpenAL", path: "Support/COpenAL", pkgConfig: "openal", providers: [.apt(["libopenal-dev"])]),
        // Soundstage's environment node against OpenAL Soft (HRTF on and off), N moving sources, one process.
        .executableTarget(
            name: "OpenALCompare",
            dependencies: [
                "COpenAL", "RenderFixtures", .product(name: "AudioGraph", package: "Soundstage"),
                .product(name: "SoundstageKit", package: "Soundstage")
            ],
            path: "Tools/OpenALCompare"
        ),
        // The HRTF cues of OpenAL Soft and of Soundstage against the MIT KEMAR set, side by side.
        .executableTarget(
            name: "HRTFFidelityCompare",
            dependencies: [
                "COpenAL", .product(name: "AudioDSP", package: "Soundstage"),
                .product(name: "SpatialAssets", package: "Soundstage")
            ],
            path: "Tools/HRTFFidelityCompare"
        ),
        // Plain measurement of one stereo instance of each effect node, and of the time-effect kernels.
        .executableTarget(
            name: "EffectCost",
            dependencies: [
                .product(name: "AudioGraph", package: "Soundstage"),
                .product(name: "AudioDSP", package: "Soundstage")
            ],
            path: "Tools/EffectCost"
        ),
        // glibc's heap-in-use figure (mallinfo2), which Swift's Glibc module does not export.
        .target(name: "CHeapStats", path: "Support/CHeapStats"),
        // Streaming fixtures: long, distinct assets in every format; thread CPU, RSS, heap, quantiles.
        .target(
            name: "StreamFixtures",
            dependencies: ["CHeapStats", .product(name: "AudioFiles", package: "Soundstage")],
            path: "Support/StreamFixtures"
        ),
        // N players streaming N long files from disk, rendered in real time on a paced render thread.
        .executableTarget(
            name: "StreamLoad",
            dependencies: [
                "StreamFixtures",
                .product(name: "AudioGraph", package: "Soundstage"),
                .product(name: "AudioFiles", package: "Soundstage"),
                .product(name: "SoundstageKit", package: "Soundstage")
            ],
            path: "Tools/StreamLoad"
        ),
        // Single-thread decode speed per format (preload and streaming paths).
        .executableTarget(
            name: "DecodeSpeed",
            dependencies: ["StreamFixtures", .product(name: "AudioFiles", package: "Soundstage")],
            path: "Tools/DecodeSpeed"
        ),
        // StreamRing.read on its own: the render-side cost of a streamed player.
        .executableTarget(
            name: "RingReadCost",
            dependencies: [.product(name: "AudioDSP", package: "Soundstage")],
            path: "Tools/RingReadCost"
        ),
        // webrtc-audio-processing 0.3 (Debian's libwebrtc-audio-processing, apt libwebrtc-audio-processing-dev)
        // behind a small C interface: a benchmark-only anchor for VoiceBench. Flags as pkg-config gives them
        // for webrtc-audio-processing.
        .target(
            name: "CWebRTCAnchor",
            path: "Support/CWebRTCAnchor",
            cxxSettings: [
                .define("WEBRTC_AUDIO_PROCESSING_ONLY_BUILD"), .define("WEBRTC_POSIX"),
                .unsafeFlags(["-I/usr/include/webrtc_audio_processing"])
            ],
            linkerSettings: [.linkedLibrary("webrtc_audio_processing")]
        ),
        // Voice processing (echo cancellation) on a scene: the voice processor against SpeexDSP and
        // webrtc-audio-processing called directly; Benchmarks/run-voice.sh generates the scenes and scores
        // the outputs.
        .executableTarget(
            name: "VoiceBench",
            dependencies: ["CWebRTCAnchor", .product(name: "AudioDSP", package: "Soundstage")],
            path: "Tools/VoiceBench"
        ),
        // Engine.setVector on its own: the control-side cost of moving a 3D source.
        .executableTarget(
            name: "SetVectorCost",
            dependencies: [
                .product(name: "AudioGraph", package: "Soundstage"),
                .product(name: "SoundstageKit", package: "Soundstage")
            ],
            path: "Tools/SetVectorCost"
        )
    ]
)
