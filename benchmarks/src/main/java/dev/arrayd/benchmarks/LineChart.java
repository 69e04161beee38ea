package dev.arrayd.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Curves of several series over a logarithmic x axis, with an optional horizontal reference line: Task
 * Bench's efficiency-versus-granularity picture, where the METG is where a curve crosses the line.
 */
final class LineChart {

    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2),
            new Color(0x7f7f7f), new Color(0xbcbd22), new Color(0x17becf)};

    private final String title;
    private final String xTitle;
    private final String yTitle;
    private final Map<String, double[][]> series = new LinkedHashMap<>();
    private Double reference;
    private String referenceLabel;
    private boolean yLog;

    LineChart(String title, String xTitle, String yTitle) {
        this.title = title;
        this.xTitle = xTitle;
        this.yTitle = yTitle;
    }

    LineChart add(String name, double[] x, double[] y) {
        series.put(name, new double[][] {x.clone(), y.clone()});
        return this;
    }

    /** A dashed horizontal line at {@code y} (e.g. 50% efficiency). */
    LineChart reference(double y, String label) {
        reference = y;
        referenceLabel = label;
        return this;
    }

    LineChart yLogarithmic() {
        yLog = true;
        return this;
    }

    void writePng(Path file) throws IOException {
        XYChart chart = new XYChartBuilder().width(900).height(560).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(yLog);
        chart.getStyler().setXAxisDecimalPattern("#,##0.#");
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        double xMin = Double.MAX_VALUE;
        double xMax = 0;
        int c = 0;
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            XYSeries s = chart.addSeries(e.getKey(), e.getValue()[0], e.getValue()[1]);
            s.setMarker(SeriesMarkers.CIRCLE);
            s.setLineColor(COLORS[c % COLORS.length]);
            s.setMarkerColor(COLORS[c++ % COLORS.length]);
            s.setLineStyle(new BasicStroke(1.5f));
            for (double x : e.getValue()[0]) {
                xMin = Math.min(xMin, x);
                xMax = Math.max(xMax, x);
            }
        }
        if (reference != null && xMax > 0) {
            XYSeries r = chart.addSeries(referenceLabel, new double[] {xMin, xMax}, new double[] {reference, reference});
            r.setMarker(SeriesMarkers.NONE);
            r.setLineColor(Color.GRAY);
            r.setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
