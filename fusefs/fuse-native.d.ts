// The part of fuse-native 2.2.6 that powercut uses (the package ships no types).
declare module 'fuse-native' {
  type Callback = (err: Error | null) => void;
  class Fuse {
    constructor(mountpoint: string, ops: Record<string, (...args: any[]) => void>, opts?: Record<string, unknown>);
    mount(cb: Callback): void;
    unmount(cb: Callback): void;
    static unmount(mountpoint: string, cb: Callback): void;
  }
  export default Fuse;
}
