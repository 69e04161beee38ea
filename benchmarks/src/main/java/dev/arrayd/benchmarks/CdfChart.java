package dev.arrayd.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * A latency CDF of several methods in one PNG: x = latency in µs, y = share of samples at or below it.
 * A CDF shows the median, the spread and the tail of every method on one picture, where a histogram
 * needs a bin width and a box plot hides the shape.
 */
final class CdfChart {

    /** Points drawn per series: enough for a smooth curve, few enough for a small file. */
    private static final int POINTS = 1_000;
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0xff7f0e)};

    private final String title;
    private final Map<String, long[]> series = new LinkedHashMap<>();

    CdfChart(String title) {
        this.title = title;
    }

    /** Adds a method's samples, in nanoseconds. */
    CdfChart add(String name, long[] nanos) {
        series.put(name, nanos);
        return this;
    }

    /**
     * Writes the PNG. The x axis is logarithmic and ends at the largest p99.9 times 1.2: beyond that are
     * single outliers (a GC, a descheduled thread).
     */
    void writePng(Path file) throws IOException {
        XYChart chart = new XYChartBuilder().width(900).height(560).title(title)
                .xAxisTitle("round trip (µs)").yAxisTitle("share of samples at or below (%)").build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotGridLinesVisible(true);
        // log x: the bodies (tens of µs) and the tails (ms) both stay readable
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setXAxisDecimalPattern("#,##0");
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideSE);
        double xMax = 0;
        int c = 0;
        for (Map.Entry<String, long[]> e : series.entrySet()) {
            long[] sorted = e.getValue().clone();
            Arrays.sort(sorted);
            int n = Math.min(POINTS, sorted.length);
            double[] x = new double[n];
            double[] y = new double[n];
            for (int i = 0; i < n; i++) {
                // i-th of n evenly spaced ranks, the last one being the maximum
                int rank = (int) ((long) (i + 1) * sorted.length / n) - 1;
                x[i] = sorted[rank] / 1_000.0;
                y[i] = 100.0 * (rank + 1) / sorted.length;
            }
            xMax = Math.max(xMax, Summary.rank(sorted, 99.9) / 1_000.0 * 1.2);
            String label = String.format(Locale.ROOT, "%s (median %.1f µs)", e.getKey(),
                    Summary.rank(sorted, 50) / 1_000.0);
            XYSeries s = chart.addSeries(label, x, y);
            s.setMarker(SeriesMarkers.NONE);
            s.setLineColor(COLORS[c++ % COLORS.length]);
            s.setLineStyle(new BasicStroke(2f));
        }
        chart.getStyler().setXAxisMax(Math.max(1.0, xMax));
        // a fixed 0..100 range gives round ticks (XChart picks dense odd ones for free ranges)
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(100.0);
        chart.getStyler().setYAxisDecimalPattern("0");
        chart.getStyler().setYAxisTickMarkSpacingHint(48);
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
