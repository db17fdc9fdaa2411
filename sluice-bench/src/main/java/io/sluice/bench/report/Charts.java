package io.sluice.bench.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Paint;
import java.io.IOException;
import java.text.DecimalFormat;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

/** Bar charts of the report, drawn with JFreeChart into PNG files: same style for every chart. */
final class Charts {
    private Charts() {}

    /** Sluice's series in blues, in order; each peer keeps one hue in every chart. */
    private static final List<Color> SLUICE_BLUES = List.of(new Color(0x1f4e9c), new Color(0x5b9be6),
            new Color(0x0b2452), new Color(0xa9cbf5), new Color(0x1a9bb0), new Color(0x3d6fb8));
    private static final Map<String, Color> PEERS = Map.of(
            "guava", new Color(0xd9822b),
            "bucket4j", new Color(0x2e9e4f),
            "bucket4j-batch", new Color(0x8fd19e),
            "resilience4j", new Color(0xc23b3b),
            "redisson", new Color(0x8a5fbf),
            "bare-lua", new Color(0x7a7a7a),
            "ceiling", new Color(0x222222));

    /** The colour of a series named "system" or "system algorithm". */
    private static Color color(String series, int sluiceIndex) {
        if (series.startsWith("sluice")) {
            return series.contains("redis-benchmark") ? PEERS.get("ceiling")
                    : SLUICE_BLUES.get(sluiceIndex % SLUICE_BLUES.size());
        }
        String system = series.split(" ")[0];
        return PEERS.getOrDefault(system, new Color(0xb5a30f));
    }

    /**
     * Writes a grouped bar chart: one group per category, one bar per series.
     *
     * @param vertical whether bars stand up (false: horizontal bars, for long category names)
     */
    static void bars(Path file, String title, String categoryLabel, String valueLabel, DefaultCategoryDataset data,
                     boolean vertical, int width, int height) throws IOException {
        bars(file, title, categoryLabel, valueLabel, data, vertical, false, width, height);
    }

    /**
     * As {@link #bars(Path, String, String, String, DefaultCategoryDataset, boolean, int, int)}, on a logarithmic
     * value axis when {@code logarithmic}: for results that span orders of magnitude (Bucket4j's batching on a hot
     * key against its CAS storm), where a linear axis would flatten everything else.
     */
    static void bars(Path file, String title, String categoryLabel, String valueLabel, DefaultCategoryDataset data,
                     boolean vertical, boolean logarithmic, int width, int height) throws IOException {
        boolean oneSeries = data.getRowCount() == 1;
        JFreeChart chart = ChartFactory.createBarChart(title, categoryLabel, valueLabel, data,
                vertical ? PlotOrientation.VERTICAL : PlotOrientation.HORIZONTAL, !oneSeries, false, false);
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlineStroke(new BasicStroke(1f));
        plot.setOutlineVisible(false);
        if (logarithmic) {
            LogAxis values = new LogAxis(valueLabel);
            values.setBase(10);
            values.setTickUnit(new NumberTickUnit(1, new DecimalFormat("#,##0.###")));
            values.setNumberFormatOverride(new DecimalFormat("#,##0.###"));
            values.setSmallestValue(0.1);
            plot.setRangeAxis(values);
        }
        CategoryAxis axis = plot.getDomainAxis();
        axis.setCategoryMargin(0.15);
        if (vertical && data.getColumnCount() > 6) {
            axis.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        }
        BarRenderer renderer = oneSeries ? new CategoryColouredRenderer(data) : (BarRenderer) plot.getRenderer();
        plot.setRenderer(renderer);
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        renderer.setItemMargin(0.02);
        renderer.setDrawBarOutline(false);
        int sluiceSeries = 0;
        for (int i = 0; i < data.getRowCount() && !oneSeries; i++) {
            String series = data.getRowKey(i).toString();
            renderer.setSeriesPaint(i, color(series, sluiceSeries));
            if (series.startsWith("sluice")) {
                sluiceSeries++;
            }
        }
        ChartUtils.saveChartAsPNG(file.toFile(), chart, width, height);
    }

    /** One series whose bars are the systems: each bar gets its system's colour, as in the other charts. */
    private static final class CategoryColouredRenderer extends BarRenderer {
        private static final long serialVersionUID = 1L;
        private final transient List<Color> colours = new ArrayList<>();

        CategoryColouredRenderer(DefaultCategoryDataset data) {
            int sluiceSeries = 0;
            for (int i = 0; i < data.getColumnCount(); i++) {
                String category = data.getColumnKey(i).toString();
                colours.add(color(category, sluiceSeries));
                if (category.startsWith("sluice")) {
                    sluiceSeries++;
                }
            }
        }

        @Override
        public Paint getItemPaint(int row, int column) {
            return colours.get(column);
        }
    }
}
