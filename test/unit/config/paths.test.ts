import { describe, expect, it } from 'vitest';
import { configDir } from '../../../src/config/paths.js';

describe('configDir', () => {
  it('prefers LEADCTL_CONFIG_DIR', () => {
    expect(configDir({ LEADCTL_CONFIG_DIR: '/tmp/x', XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/u')).toBe('/tmp/x');
  });
  it('follows XDG on Linux, with no -nodejs suffix', () => {
    expect(configDir({ XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/u')).toBe('/xdg/leadctl');
    expect(configDir({}, 'linux', '/home/u')).toBe('/home/u/.config/leadctl');
  });
  it('ignores a relative XDG_CONFIG_HOME, as the XDG spec says', () => {
    expect(configDir({ XDG_CONFIG_HOME: 'rel' }, 'linux', '/home/u')).toBe('/home/u/.config/leadctl');
  });
  it("uses the platform's folder on macOS and Windows", () => {
    expect(configDir({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Preferences/leadctl');
    expect(configDir({ APPDATA: '/appdata' }, 'win32', '/home/u')).toMatch(/^\/appdata[\\/]leadctl[\\/]Config$/);
  });
});
