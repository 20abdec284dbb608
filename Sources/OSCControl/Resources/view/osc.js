// Soundstage web view: a small OSC 1.0 binary codec (big-endian), enough for the engine's address space.
// Encodes messages with int32 (i), float32 (f), string (s), blob (b), int64 (h), timetag (t), T and F;
// decodes the same plus double (d), symbol (S), char (c), nil (N) and impulse (I), and flattens
// `#bundle`s (nested ones too) into their messages.
// SPDX-License-Identifier: GPL-3.0-or-later
"use strict";

const OSC = (() => {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder("utf-8");

  function pad4(n) {
    return (n + 3) & ~3;
  }

  function stringBytes(text) {
    const raw = encoder.encode(text);
    const out = new Uint8Array(pad4(raw.length + 1));
    out.set(raw);
    return out;
  }

  /// An argument as given: a plain number is a float32, a boolean T/F, a string s, a Uint8Array a blob;
  /// `{type, value}` chooses the type explicitly (e.g. `{type: "i", value: 50}`).
  function typed(arg) {
    if (arg !== null && typeof arg === "object" && !(arg instanceof Uint8Array) && "type" in arg) return arg;
    if (typeof arg === "number") return { type: "f", value: arg };
    if (typeof arg === "boolean") return { type: arg ? "T" : "F", value: arg };
    if (typeof arg === "string") return { type: "s", value: arg };
    if (typeof arg === "bigint") return { type: "h", value: arg };
    if (arg instanceof Uint8Array) return { type: "b", value: arg };
    throw new Error("cannot encode OSC argument " + String(arg));
  }

  /// One OSC message as bytes.
  function encodeMessage(address, args = []) {
    const items = args.map(typed);
    const parts = [stringBytes(address), stringBytes("," + items.map((a) => a.type).join(""))];
    for (const { type, value } of items) {
      let bytes;
      let view;
      switch (type) {
        case "i":
          bytes = new Uint8Array(4);
          new DataView(bytes.buffer).setInt32(0, value | 0);
          break;
        case "f":
          bytes = new Uint8Array(4);
          new DataView(bytes.buffer).setFloat32(0, value);
          break;
        case "h":
          bytes = new Uint8Array(8);
          new DataView(bytes.buffer).setBigInt64(0, BigInt(value));
          break;
        case "t":
          bytes = new Uint8Array(8);
          view = new DataView(bytes.buffer);
          view.setUint32(0, value.seconds >>> 0);
          view.setUint32(4, value.fraction >>> 0);
          break;
        case "s":
          bytes = stringBytes(String(value));
          break;
        case "b":
          bytes = new Uint8Array(4 + pad4(value.length));
          new DataView(bytes.buffer).setInt32(0, value.length);
          bytes.set(value, 4);
          break;
        case "T":
        case "F":
          continue;
        default:
          throw new Error("cannot encode OSC type " + type);
      }
      parts.push(bytes);
    }
    const total = parts.reduce((sum, p) => sum + p.length, 0);
    const out = new Uint8Array(total);
    let offset = 0;
    for (const p of parts) {
      out.set(p, offset);
      offset += p.length;
    }
    return out;
  }

  function readString(bytes, offset) {
    let end = offset;
    while (end < bytes.length && bytes[end] !== 0) end++;
    if (end >= bytes.length) throw new Error("unterminated OSC string");
    return { value: decoder.decode(bytes.subarray(offset, end)), next: pad4(end + 1) };
  }

  function decodeMessage(bytes) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const address = readString(bytes, 0);
    let offset = address.next;
    const args = [];
    const types = [];
    if (offset >= bytes.length) return { address: address.value, args, types: "" };
    const tags = readString(bytes, offset);
    offset = tags.next;
    if (!tags.value.startsWith(",")) throw new Error("OSC type tags must start with ','");
    for (const type of tags.value.slice(1)) {
      types.push(type);
      switch (type) {
        case "i":
          args.push(view.getInt32(offset));
          offset += 4;
          break;
        case "f":
          args.push(view.getFloat32(offset));
          offset += 4;
          break;
        case "d":
          args.push(view.getFloat64(offset));
          offset += 8;
          break;
        case "h":
          args.push(Number(view.getBigInt64(offset)));
          offset += 8;
          break;
        case "t":
          args.push({ seconds: view.getUint32(offset), fraction: view.getUint32(offset + 4) });
          offset += 8;
          break;
        case "c":
          args.push(String.fromCharCode(view.getInt32(offset)));
          offset += 4;
          break;
        case "s":
        case "S": {
          const s = readString(bytes, offset);
          args.push(s.value);
          offset = s.next;
          break;
        }
        case "b": {
          const length = view.getInt32(offset);
          args.push(bytes.slice(offset + 4, offset + 4 + length));
          offset += 4 + pad4(length);
          break;
        }
        case "T":
          args.push(true);
          break;
        case "F":
          args.push(false);
          break;
        case "N":
          args.push(null);
          break;
        case "I":
          args.push(Infinity);
          break;
        default:
          throw new Error("unknown OSC type tag " + type);
      }
      if (offset > bytes.length) throw new Error("OSC message shorter than its type tags");
    }
    return { address: address.value, args, types: types.join("") };
  }

  const bundleTag = stringBytes("#bundle");

  function isBundle(bytes) {
    if (bytes.length < 16) return false;
    for (let i = 0; i < 8; i++) if (bytes[i] !== bundleTag[i]) return false;
    return true;
  }

  /// Every message of a packet (a message, or a bundle flattened in order).
  function decodePacket(data, depth = 0) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    if (!isBundle(bytes)) return [decodeMessage(bytes)];
    if (depth > 8) throw new Error("OSC bundles nested too deeply");
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const messages = [];
    let offset = 16;
    while (offset + 4 <= bytes.length) {
      const size = view.getInt32(offset);
      offset += 4;
      if (size < 0 || offset + size > bytes.length) throw new Error("OSC bundle element overruns the packet");
      messages.push(...decodePacket(bytes.subarray(offset, offset + size), depth + 1));
      offset += size;
    }
    return messages;
  }

  return { encodeMessage, decodePacket, int: (value) => ({ type: "i", value }) };
})();

if (typeof module !== "undefined") module.exports = OSC;
