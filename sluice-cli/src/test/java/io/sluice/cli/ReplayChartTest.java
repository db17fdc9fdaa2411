package io.sluice.cli;

import static io.sluice.cli.ReplayRun.replay;
import static io.sluice.cli.ReplayRun.resource;
import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

/** {@code --chart}: PNG and SVG files of the documented pixel size, one panel per rules file. */
class ReplayChartTest {

    @TempDir
    Path dir;

    @Test
    void pngOfTheDefaultSizeForOnePanel() throws Exception {
        Path png = dir.resolve("chart.png");

        ReplayRun run = replay("--rules", resource("leaky_bucket.yaml"), "--trace", resource("leaky_bucket.jsonl"),
                "--out", dir.resolve("d.jsonl"), "--chart", png);

        assertThat(run.exitCode()).as(run.err()).isZero();
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(1000);
        assertThat(image.getHeight()).isEqualTo(120 + 260);
    }

    @Test
    void oneMorePanelPerComparedRulesFile() throws Exception {
        Path png = dir.resolve("compare.png");

        ReplayRun run = replay("--rules", resource("fixed_window.yaml"), "--trace", resource("fixed_window.jsonl"),
                "--out", dir.resolve("d.jsonl"), "--chart", png, "--compare", resource("fixed_window.yaml"),
                resource("fixed_window.yaml"));

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(ImageIO.read(png.toFile()).getHeight()).isEqualTo(120 + 3 * 260);
    }

    @Test
    void svgWithTheRequestedSize() throws Exception {
        Path svg = dir.resolve("chart.svg");

        ReplayRun run = replay("--rules", resource("token_bucket.yaml"), "--trace", resource("token_bucket.jsonl"),
                "--out", dir.resolve("d.jsonl"), "--chart", svg, "--chart-size", "640x480", "--slice", "100ms");

        assertThat(run.exitCode()).as(run.err()).isZero();
        DocumentBuilderFactory xml = DocumentBuilderFactory.newInstance();
        // The file names the SVG 1.1 DTD; there is no need to fetch it to read two attributes.
        xml.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        Element root = xml.newDocumentBuilder().parse(svg.toFile()).getDocumentElement();
        assertThat(root.getTagName()).isEqualTo("svg");
        assertThat(Double.parseDouble(root.getAttribute("width"))).isEqualTo(640);
        assertThat(Double.parseDouble(root.getAttribute("height"))).isEqualTo(480);
        assertThat(Files.readString(svg)).contains("admitted").contains("rejected").contains("token_bucket.yaml");
    }

    @Test
    void panelsAreTitledByFileNameWhereverTheFilesLie() throws Exception {
        // A directory name long enough that a title carrying the whole path would wrap, as a checkout at an
        // unlucky path did: the panel shows the file name, and the chart the trace's file name, in one piece.
        Path deep = Files.createDirectories(dir.resolve("d".repeat(120)).resolve("e".repeat(90)));
        Path rules = Files.copy(resource("token_bucket.yaml"), deep.resolve("token_bucket.yaml"));
        Path trace = Files.copy(resource("token_bucket.jsonl"), deep.resolve("token_bucket.jsonl"));
        Path svg = dir.resolve("chart.svg");

        ReplayRun run = replay("--rules", rules, "--trace", trace, "--out", dir.resolve("d.jsonl"), "--chart", svg,
                "--chart-size", "640x480");

        assertThat(run.exitCode()).as(run.err()).isZero();
        String text = Files.readString(svg);
        assertThat(text).contains(">token_bucket.yaml   admitted ").contains(">sluice replay of token_bucket.jsonl<")
                .doesNotContain("ddd");
    }

    @Test
    void comparedFilesOfOneNameAreTitledByThePathsGiven() {
        Path a = Path.of("a", "token_bucket.yaml");
        Path b = Path.of("b", "token_bucket.yaml");

        assertThat(ReplayChart.panelTitles(List.of(a, b, b)))
                .containsExactly(a.toString(), b.toString(), b.toString());
        assertThat(ReplayChart.panelTitles(List.of(a, a, Path.of("gcra.yaml"))))
                .containsExactly("token_bucket.yaml", "token_bucket.yaml", "gcra.yaml");
    }

    @Test
    void replacesAnExistingChartOnlyWhenDone() throws Exception {
        Path png = Files.writeString(dir.resolve("chart.png"), "old");

        ReplayRun run = replay("--rules", resource("gcra.yaml"), "--trace", resource("gcra.jsonl"),
                "--out", dir.resolve("d.jsonl"), "--chart", png);

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(ImageIO.read(png.toFile())).isNotNull();
        assertThat(dir.toFile().list()).containsExactlyInAnyOrder("chart.png", "d.jsonl");
    }
}
