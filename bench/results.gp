set terminal pngcairo size 1100,520 font ',10'
set output 'bench/results.png'
set multiplot layout 1,2 title 'vrss on virtio-net, 2 vCPUs, TCP 8 streams from the host (median, bars: min-max)'
set style fill solid 0.6 border -1
set boxwidth 0.7
set xtics rotate by -35 nomirror
set grid ytics
set yrange [0:*]
set title 'throughput (Mbit/s, higher is better)'
plot 'bench/results.tsv' using 0:2:xtic(1) with boxes lc rgb '#4a7ebb' notitle, \
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1 notitle
set title 'CPU cycles per byte received (lower is better)'
plot 'bench/results.tsv' using 0:5:xtic(1) with boxes lc rgb '#c0504d' notitle
unset multiplot
