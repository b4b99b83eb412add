package io.github.pgidgen;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/** The shared vectors of tests/vectors (the system property pgidgen.vectors, else ../../tests/vectors). */
final class Vectors {
    private Vectors() {}

    static Path dir() {
        return Path.of(System.getProperty("pgidgen.vectors", "../../tests/vectors"));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> read(String name) throws IOException {
        return (Map<String, Object>) Json.read(dir().resolve(name));
    }
}
