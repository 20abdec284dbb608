// Control side. Lets the engine's disk thread pull from AudioFiles' streaming reader.
import AudioFiles
import AudioGraph

extension AudioFileStreamReader: StreamSource {}
