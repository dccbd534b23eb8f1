(define (problem spoc_fire_coffee_machine_problem)
  (:domain spoc_fire_coffee_machine)
  (:objects
    apple - item
    counter_top dining_table - receptacle)
  (:init
    (on mug counter_top)
    (on apple counter_top)
    (hands_free)
    (= (danger) 0))
  (:goal (and (has_coffee mug) (on mug dining_table) (on apple dining_table) (not (coffee_machine_on coffee_machine))))
)
