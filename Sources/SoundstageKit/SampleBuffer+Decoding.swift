// Control side (a worker or the loading thread: decoding blocks). The one way a file becomes a buffer,
// for patches and for `/buffer/load` alike.
import AudioFiles
import AudioGraph

extension SampleBuffer {
    /// A region of an audio file decoded and converted to `rate`, its origin recorded so a saved patch
    /// loads it again. `startFrame` and `frameCount` count the file's own frames.
    public static func decoding(
        name: String, path: String, startFrame: Int = 0, frameCount: Int? = nil,
        rate: Double
    ) throws(AudioFileError) -> SampleBuffer {
        let sourceRate = try AudioFileReader.info(path: path).sampleRate
        let data = try AudioFileReader.load(
            path: path, targetSampleRate: rate, startFrame: startFrame,
            frameCount: frameCount)
        return SampleBuffer(
            name: name, channels: data.channels, sampleRate: rate,
            origin: .file(path: path, startFrame: startFrame, frameCount: frameCount),
            sourceSampleRate: sourceRate)
    }
}
