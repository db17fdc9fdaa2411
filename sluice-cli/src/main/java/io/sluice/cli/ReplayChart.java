package io.sluice.cli;

import io.sluice.rules.Durations;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TimeZone;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItem;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.annotations.XYTitleAnnotation;
import org.jfree.chart.axis.DateAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.StackedXYBarRenderer;
import org.jfree.chart.renderer.xy.StandardXYBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.data.xy.DefaultTableXYDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.apache.batik.dom.GenericDOMImplementation;
import org.apache.batik.svggen.SVGGraphics2D;

/**
 * {@code --chart}: one panel per rules file, stacked on a shared time axis, each showing requests admitted
 * (green) and rejected (red) per time slice as stacked bars, and, when any request had to wait (shaping
 * algorithms), the longest wait per slice as a line on a second axis. PNG or SVG by the file's extension.
 */
final class ReplayChart {

    /** Default width in pixels. */
    static final int DEFAULT_WIDTH = 1000;
    /** Default height: this much for the title, legend and time axis ... */
    static final int FRAME_HEIGHT = 120;
    /** ... plus this much per panel. */
    static final int PANEL_HEIGHT = 260;
    /** Most bars per panel: enough to see shape, few enough to see each bar. */
    static final int MAX_SLICES = 200;

    private static final Color ADMITTED = new Color(0x2e7d32);
    private static final Color REJECTED = new Color(0xc62828);
    private static final Color WAIT = new Color(0x1565c0);

    /** One rules file's replay. */
    record Panel(String title, Timeline.Slices slices, boolean showWaits, long admitted, long rejected) {}

    private ReplayChart() {}

    /** Whether {@code file} names an SVG (else a PNG). */
    /**
     * The panels' titles for these rules files: each file's name, short enough never to wrap, unless two
     * different files share a name, and then the paths as given, so that the panels can be told apart. Never
     * the absolute path: a chart must not change with where the files lie.
     */
    static List<String> panelTitles(List<Path> rulesFiles) {
        Map<String, Set<Path>> byName = new HashMap<>();
        for (Path file : rulesFiles) {
            byName.computeIfAbsent(fileName(file), n -> new HashSet<>()).add(file.normalize());
        }
        boolean ambiguous = byName.values().stream().anyMatch(paths -> paths.size() > 1);
        return rulesFiles.stream().map(f -> ambiguous ? f.toString() : fileName(f)).toList();
    }

    /** The last element of {@code file}, or the whole of it when it has none (a root). */
    static String fileName(Path file) {
        Path name = file.getFileName();
        return name == null ? file.toString() : name.toString();
    }

    static boolean isSvg(Path file) {
        return file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".svg");
    }

    static void write(Path file, boolean svg, String title, List<Panel> panels, int width, int height)
            throws IOException {
        JFreeChart chart = chart(title, panels);
        if (svg) {
            org.w3c.dom.Document document = GenericDOMImplementation.getDOMImplementation()
                    .createDocument("http://www.w3.org/2000/svg", "svg", null);
            SVGGraphics2D g = new SVGGraphics2D(document);
            g.setSVGCanvasSize(new java.awt.Dimension(width, height));
            chart.draw(g, new Rectangle(0, 0, width, height));
            try (java.io.Writer out = java.nio.file.Files.newBufferedWriter(file, java.nio.charset.StandardCharsets.UTF_8)) {
                g.stream(out, true);
            }
        } else {
            // ImageIO directly rather than ChartUtils, which looks its PNG encoder up by class name: with no
            // name lookups left, the launcher jar keeps only the JFreeChart classes this file reaches.
            if (!ImageIO.write(chart.createBufferedImage(width, height), "png", file.toFile())) {
                throw new IOException("this Java runtime has no PNG writer");
            }
        }
    }

    static JFreeChart chart(String title, List<Panel> panels) {
        long sliceMicros = panels.get(0).slices().width();
        DateAxis time = new DateAxis("time (UTC); one bar per " + Durations.format(Duration.ofNanos(sliceMicros * 1_000)));
        time.setTimeZone(TimeZone.getTimeZone("UTC"));
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(time);
        plot.setGap(14);
        boolean anyWaits = false;
        for (Panel panel : panels) {
            plot.add(panel(panel), 1);
            anyWaits |= panel.showWaits();
        }
        LegendItemCollection legend = new LegendItemCollection();
        legend.add(new LegendItem("admitted", ADMITTED));
        legend.add(new LegendItem("rejected", REJECTED));
        if (anyWaits) {
            legend.add(new LegendItem("longest wait (ms, right axis)", WAIT));
        }
        plot.setFixedLegendItems(legend);
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 16), plot, true);
        chart.getLegend().setPosition(RectangleEdge.TOP);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }

    private static XYPlot panel(Panel panel) {
        Timeline.Slices s = panel.slices();
        DefaultTableXYDataset counts = new DefaultTableXYDataset();
        XYSeries admitted = new XYSeries("admitted", false, false);
        XYSeries rejected = new XYSeries("rejected", false, false);
        XYSeries waits = new XYSeries("longest wait", false, false);
        for (int i = 0; i < s.count(); i++) {
            double startMillis = (s.firstStart() + i * s.width()) / 1_000.0;
            admitted.add(startMillis, s.admitted()[i], false);
            rejected.add(startMillis, s.rejected()[i], false);
            // No point where nothing waited: the line breaks there instead of dropping to zero.
            waits.add(startMillis, s.longestWait()[i] == 0 ? null : s.longestWait()[i] / 1_000.0, false);
        }
        counts.addSeries(admitted);
        counts.addSeries(rejected);
        counts.setIntervalWidth(s.width() / 1_000.0);
        counts.setIntervalPositionFactor(0.0); // a bar starts at its slice's start

        StackedXYBarRenderer bars = new StackedXYBarRenderer(0.1);
        bars.setBarPainter(new StandardXYBarPainter());
        bars.setShadowVisible(false);
        bars.setDrawBarOutline(false);
        bars.setSeriesPaint(0, ADMITTED);
        bars.setSeriesPaint(1, REJECTED);

        NumberAxis requests = new NumberAxis("requests per slice");
        requests.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        requests.setUpperMargin(0.2); // room for the panel's label above the tallest bar
        XYPlot plot = new XYPlot(counts, null, requests, bars);
        plot.setBackgroundPaint(new Color(0xf7f7f7));
        plot.setRangeGridlinePaint(new Color(0xcccccc));
        plot.setDomainGridlinePaint(new Color(0xcccccc));
        plot.setAxisOffset(RectangleInsets.ZERO_INSETS);

        if (panel.showWaits()) {
            NumberAxis waitAxis = new NumberAxis("longest wait (ms)");
            waitAxis.setLabelPaint(WAIT);
            waitAxis.setTickLabelPaint(WAIT);
            XYLineAndShapeRenderer line = new XYLineAndShapeRenderer(true, true);
            line.setSeriesPaint(0, WAIT);
            line.setSeriesStroke(0, new BasicStroke(1.5f));
            line.setSeriesShape(0, new Ellipse2D.Double(-2.5, -2.5, 5, 5));
            // The renderer first: a dataset without one is measured by the stacked bars' renderer.
            plot.setRenderer(1, line);
            plot.setRangeAxis(1, waitAxis);
            plot.setDataset(1, new XYSeriesCollection(waits));
            plot.mapDatasetToRangeAxis(1, 1);
            plot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
        }

        TextTitle label = new TextTitle(panel.title() + "   admitted " + panel.admitted() + ", rejected "
                + panel.rejected(), new Font(Font.SANS_SERIF, Font.BOLD, 12));
        label.setBackgroundPaint(new Color(255, 255, 255, 210));
        label.setPadding(2, 4, 2, 4);
        plot.addAnnotation(new XYTitleAnnotation(0.005, 0.98, label, RectangleAnchor.TOP_LEFT));
        return plot;
    }
}
