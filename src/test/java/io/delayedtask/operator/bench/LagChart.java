package io.delayedtask.operator.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;

/** A bar chart of fire lag p50/p99/max per system, on a log scale (lags span 1 ms to 1 s). */
final class LagChart {
  /** Bars start here: a log axis has no zero. */
  private static final double FLOOR_MILLIS = 0.1;

  private LagChart() {}

  static void write(List<SystemResult> results, int ratePerSecond, String subtitle, Path png)
      throws IOException {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    for (SystemResult r : results) {
      FireRecorder.LagSummary lag = r.steady().lag();
      data.addValue(Math.max(FLOOR_MILLIS, lag.p50Millis()), "p50", r.system());
      data.addValue(Math.max(FLOOR_MILLIS, lag.p99Millis()), "p99", r.system());
      data.addValue(Math.max(FLOOR_MILLIS, lag.maxMillis()), "max", r.system());
    }
    JFreeChart chart =
        ChartFactory.createBarChart(
            "Fire lag at " + ratePerSecond + " tasks/s (lower is better)",
            null,
            "fire lag, ms (log scale)",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.setRangeGridlineStroke(new BasicStroke(1f));

    LogAxis axis = new LogAxis("fire lag, ms (log scale)");
    axis.setBase(10);
    // One labelled tick per power of ten (0.1, 1, 10, 100, 1,000 ms), minor ticks between.
    axis.setTickUnit(new NumberTickUnit(1), false, false);
    axis.setAutoTickUnitSelection(false);
    axis.setMinorTickCount(9);
    axis.setMinorTickMarksVisible(true);
    axis.setNumberFormatOverride(new DecimalFormat("#,##0.###"));
    axis.setLowerBound(FLOOR_MILLIS);
    double highest =
        results.stream().mapToDouble(r -> r.steady().lag().maxMillis()).max().orElse(1);
    axis.setUpperBound(Math.max(10, highest * 4));
    plot.setRangeAxis(axis);

    CategoryAxis categories = plot.getDomainAxis();
    categories.setMaximumCategoryLabelLines(3);
    categories.setCategoryLabelPositions(CategoryLabelPositions.STANDARD);
    categories.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));

    BarRenderer bars = (BarRenderer) plot.getRenderer();
    bars.setBase(FLOOR_MILLIS);
    bars.setBarPainter(new StandardBarPainter());
    bars.setShadowVisible(false);
    bars.setItemMargin(0.05);
    bars.setSeriesPaint(0, new Color(0x4C72B0));
    bars.setSeriesPaint(1, new Color(0xDD8452));
    bars.setSeriesPaint(2, new Color(0xC44E52));
    bars.setDefaultItemLabelGenerator(
        new StandardCategoryItemLabelGenerator("{2}", new DecimalFormat("#,##0.#")));
    bars.setDefaultItemLabelsVisible(true);
    bars.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
    bars.setDefaultPositiveItemLabelPosition(
        new ItemLabelPosition(ItemLabelAnchor.OUTSIDE12, TextAnchor.BOTTOM_CENTER));

    ChartUtils.saveChartAsPNG(png.toFile(), chart, 1100, 560);
  }
}
