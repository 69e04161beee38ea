package dev.arrayd.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Rates of several methods side by side, one group of bars per category (a round, a direction): a
 * method and its anchor next to each other, so their ratio is seen at a glance and so is the drift
 * between rounds.
 */
final class BarChart {

    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0xff7f0e)};

    private final String title;
    private final String yTitle;
    private final List<String> categories;
    private final Map<String, List<Double>> series = new LinkedHashMap<>();

    BarChart(String title, String yTitle, List<String> categories) {
        this.title = title;
        this.yTitle = yTitle;
        this.categories = List.copyOf(categories);
    }

    /** Adds a method: one value per category, in order. */
    BarChart add(String name, List<Double> values) {
        if (values.size() != categories.size()) {
            throw new IllegalArgumentException("values: " + values.size() + " (expected: " + categories.size()
                    + ", one per category)");
        }
        series.put(name, new ArrayList<>(values));
        return this;
    }

    void writePng(Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(900).height(560).title(title).yAxisTitle(yTitle).build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridVerticalLinesVisible(false);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("#,##0.#");
        int c = 0;
        for (Map.Entry<String, List<Double>> e : series.entrySet()) {
            chart.addSeries(e.getKey(), categories, e.getValue()).setFillColor(COLORS[c++ % COLORS.length]);
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
