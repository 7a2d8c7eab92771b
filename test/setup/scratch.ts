import { afterAll } from 'vitest';
import { removeScratchDirs } from '../helpers/scratch.js';

// Runs before each test file (setupFiles), even in a shared worker: this file's afterAll comes
// after the test file's own, once its browsers, servers and children are gone.
afterAll(removeScratchDirs);
