/**
 * Versions of the analyzers, known without loading any model (the capability registry,
 * src/capabilities/builtin.ts, declares each analyzer's version from these).
 */

/**
 * Bump when the perception analyzer's facts or description for the same frames can change.
 * perception-4: scene words of light and saturation as facts ("black and white", "low light").
 * perception-5: objects carry their class's other names as alternatives (a dog: puppy, animal).
 */
export const PERCEPTION_ANALYZER_VERSION = 'perception-5';
