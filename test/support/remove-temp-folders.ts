// A setup file (vitest.config.ts): after each test file, the temporary folders it made are removed.
import { afterAll } from "vitest";
import { removeTempFolders } from "./temp-folders.js";

afterAll(removeTempFolders);
