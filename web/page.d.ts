// Types for the checker only (never served): what the page puts on `window` for its tests and what the
// DOM library of TypeScript 4.8 lacks.

interface Window {
  /** Every line the daemon sent, in order. */
  tbReceived: string[];
  /** The last round-trip time measured, in ms; null until the first pong. */
  tbRTT: number | null;
  /** How many touch packets went. */
  tbPacketsSent: number;
  /** How many pen messages went, and the last one. */
  tbPenSent: number;
  tbPenLast?: string;
  /** What the desktop has of the text field's line. */
  tbLineSent: () => string;
  /** Whether the screen is kept awake in Slides mode. */
  tbWake?: "held" | "refused";
  /** Why the last refused connection was refused, as /pairing said. */
  tbRefusal?: string;
  /** The service worker's registration: "ready" or "failed: …". */
  tbServiceWorker?: string;
  /** The live view: frames received, frames drawn and their bytes, the last frame's monitor and picture sizes, why
   * there is no picture ("" while there is), the zoom (factor, visible part's left and top). */
  tbView: {received: number; frames: number; bytes: number; monitor: number[]; picture: number[]; none: string; zoom?: number[]};
  /** The page's handles for its tests: send a message, connect again, press Enter, the socket. */
  tb: {
    send: (message: string) => boolean;
    connect: () => void;
    enter: () => void;
    socket: () => WebSocket | null;
  };
}

interface Touch {
  /** Touch Events level 2 (Safari, Chromium): "stylus" for a pen, "direct" for a finger. */
  readonly touchType?: "direct" | "stylus";
}

/** Screen Wake Lock (not in TypeScript 4.8's DOM library). */
interface WakeLockSentinel extends EventTarget {
  release(): Promise<void>;
}
interface Navigator {
  readonly wakeLock: { request(type: "screen"): Promise<WakeLockSentinel> };
}
