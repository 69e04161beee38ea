package dev.arrayd.devices.api.ir;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The rendered source of sample kernels, byte for byte, against {@code src/test/resources/golden/}.
 * After an intended change, regenerate with {@code -Darrayd.updateGoldens=true} and review the diff.
 */
class RenderedSourceGoldenTest {

    @ParameterizedTest
    @CsvSource({
            "saxpy, c", "saxpy, cl", "saxpy, cu",
            "matmul, c", "matmul, cl", "matmul, cu",
            "gather, c", "gather, cl", "gather, cu",
            "group_sum, cl", "group_sum, cu"})
    void matchesGolden(String kernel, String target) throws IOException {
        IrKernel k = switch (kernel) {
            case "saxpy" -> IrSamples.saxpy();
            case "matmul" -> IrSamples.matmul();
            case "gather" -> IrSamples.gatherUnchecked();
            default -> IrSamples.groupSum();
        };
        CLikeRenderer renderer = switch (target) {
            case "c" -> new CRenderer();
            case "cl" -> new OpenClRenderer();
            default -> new CudaRenderer();
        };
        String rendered = renderer.render(IrValidator.check(new IrModule(List.of(k)), ""));
        String name = "golden/" + kernel + "." + target;
        if (Boolean.getBoolean("arrayd.updateGoldens")) {
            Path p = Path.of("src/test/resources", name);
            Files.createDirectories(p.getParent());
            Files.writeString(p, rendered);
            return;
        }
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(name)) {
            assertNotNull(in, "missing golden " + name + " (generate with -Darrayd.updateGoldens=true)");
            assertEquals(new String(in.readAllBytes(), StandardCharsets.UTF_8), rendered, name);
        }
    }
}
